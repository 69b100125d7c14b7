"""The JSON schemas of the suite's JSON answers, for ``structured_output``
(docs/specification.md#structured-output): with it, each call that expects JSON passes Inspect's
``response_schema``, so a provider that supports structured output (which
ones: docs/models.md, "Structured output") constrains the reply to it; the
lenient parser still reads the reply and counts what it cannot use. Off by
default: following the format is part of what the paper measured.

The root of every schema is an object (OpenAI's structured output requires
one), so an audit's verdicts come as ``{"verdicts": [...]}``, which the audit
parser reads like the bare list the prompt asks for. The prompts are
unchanged: the schema travels in the request, not in the text.
"""

from __future__ import annotations

from collections.abc import Mapping

from inspect_ai.model import GenerateConfig, ResponseSchema
from inspect_ai.util import JSONSchema

#: The key of an audit reply's list of verdicts under a schema.
VERDICTS = "verdicts"


def obj(properties: Mapping[str, JSONSchema]) -> JSONSchema:
    """An object of exactly these properties, all required (as strict structured output wants)."""
    return JSONSchema(type="object", properties=dict(properties), required=list(properties), additionalProperties=False)


def text() -> JSONSchema:
    return JSONSchema(type="string")


def flag() -> JSONSchema:
    return JSONSchema(type="boolean")


def number() -> JSONSchema:
    return JSONSchema(type="number")


def verdict_list(item: Mapping[str, JSONSchema]) -> JSONSchema:
    """An audit reply: ``{"verdicts": [item, ...]}``."""
    return obj({VERDICTS: JSONSchema(type="array", items=obj(item))})


def response_config(name: str, schema: JSONSchema | None, structured: bool) -> GenerateConfig:
    """The generate config of one call: the schema as ``response_schema`` when
    ``structured`` (and the call has one), else nothing."""
    if not structured or schema is None:
        return GenerateConfig()
    return GenerateConfig(response_schema=ResponseSchema(name=name, json_schema=schema, strict=True))
