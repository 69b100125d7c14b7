"""Which data a log ran on, by content: the report's ``dataset`` key.

Every grid task records the SHA-256 of the instance file it read
(``world.dataset.DIGEST_KEY``), ``lifelong`` also that of its lifetime file
(``world.lifetimes.DIGEST_KEY``), as ``stale`` records its corpus's. The
report keys a configuration by those digests, not by the folder named with
``-T dataset``: runs on one content are pooled whatever its path, runs on
different contents never are (a set regenerated with ``--count 2``, or with
another seed, into a folder of the same name), and a run on anything but the
installed canonical set is labelled ``dataset=sha256:<first 12> (not
canonical)``. A run on the canonical contents gets no ``dataset`` key at all,
so it pools with the runs that named no dataset (and with logs written
before the digest was recorded, which name none).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from spatialstale_evals.world import dataset, lifetimes

#: What a non-canonical dataset's key value starts with (``config_label`` shows its first 12 hex digits).
PREFIX = "sha256:"
#: The digest keys a log may carry, in the order the key joins them.
DIGEST_KEYS = (dataset.DIGEST_KEY, lifetimes.DIGEST_KEY)


@lru_cache(maxsize=64)
def canonical_digests(regime: str, size: str | None, with_lifetimes: bool) -> tuple[str, ...] | None:
    """The installed canonical set's digests of ``regime`` at ``size`` (and of
    its lifetimes), or None when it has no such file."""
    try:
        found = [dataset.content_sha256(None, regime, size)]
        if with_lifetimes:
            found.append(lifetimes.content_sha256(None, regime))
    except (dataset.DatasetError, KeyError):
        return None
    return tuple(found)


def dataset_key(meta: dict[str, Any]) -> str | None:
    """The ``dataset`` argument a configuration is keyed by: None for the
    canonical contents, ``sha256:<digest>`` (the digests joined by ``+``)
    otherwise; None as well for a log that records no digest."""
    digests = tuple(str(meta[k]) for k in DIGEST_KEYS if meta.get(k))
    if not digests:
        return None
    regime = str(meta.get("regime"))
    size = meta.get("size")
    if digests == canonical_digests(regime, str(size) if size else None, len(digests) > 1):
        return None
    return PREFIX + "+".join(digests)


def label(value: str) -> str:
    """How a configuration shows a non-canonical dataset: its digests' first 12 hex digits."""
    return "+".join(d[:12] for d in value.removeprefix(PREFIX).split("+"))
