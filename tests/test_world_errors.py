"""Bad input gives a clear error: the right exception type and a message that
names the problem; the CLI turns them into exit code 2 and ``error:``."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from spatialstale_evals import cli
from spatialstale_evals.world import dataset, generate_instance
from spatialstale_evals.world.dataset import DatasetError
from spatialstale_evals.world.grid import GridError
from spatialstale_evals.world.lifetimes import LIFETIME_DIR
from spatialstale_evals.world.regimes import REGIMES, RegimeError


@pytest.fixture()
def copy(tmp_path):
    folder = tmp_path / "ds"
    shutil.copytree(dataset.CANONICAL_DIR, folder)
    return folder


def rehash(folder, name):
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest["files"][name]["sha256"] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")


def run_cli(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- generation


@pytest.mark.parametrize("h,w", [(1, 8), (8, 1), (0, 0), (-3, 4)])
def test_grid_too_small(h, w):
    with pytest.raises(GridError) as exc:
        generate_instance(1, "L1", 0, height=h, width=w)
    assert "2x2" in str(exc.value)
    assert f"{h}x{w}" in str(exc.value)


def test_smallest_grid_works():
    inst = generate_instance(1, "L3", 0, height=2, width=2)
    assert inst.g0[0][0] == "S" and inst.g0[1][1] == "G"
    assert len(inst.memory) == 4


def test_unknown_regime():
    unknown = next(f"L{k}" for k in range(len(REGIMES) + 1) if f"L{k}" not in REGIMES)  # the next one's name
    with pytest.raises(RegimeError) as exc:
        generate_instance(1, unknown, 0)
    assert unknown in str(exc.value)
    with pytest.raises(RegimeError, match=unknown):
        dataset.generate(count=1, regimes=[unknown])
    with pytest.raises(RegimeError, match=unknown):
        dataset.load(None, unknown)


@pytest.mark.parametrize("count", [0, -5])
def test_non_positive_count(count):
    with pytest.raises(DatasetError) as exc:
        dataset.generate(count=count)
    assert "count" in str(exc.value)
    assert str(count) in str(exc.value)


def test_generate_size_error():
    with pytest.raises(GridError, match="2x2"):
        dataset.generate(count=1, height=1, width=1)


# ---------------------------------------------------------------- files


def test_truncated_file(copy):
    data = (copy / "L1.jsonl").read_bytes()
    (copy / "L1.jsonl").write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError) as exc:
        dataset.load(copy, "L1")
    assert "L1.jsonl" in str(exc.value)
    # Other regimes in the same folder are unaffected.
    assert len(dataset.load(copy, "L2")) == 50


def test_checksum_mismatch_one_byte(copy):
    data = bytearray((copy / "L2.jsonl").read_bytes())
    pos = data.index(b'"g0":["SF') + len(b'"g0":["S')
    data[pos : pos + 1] = b"H" if data[pos : pos + 1] == b"F" else b"F"
    (copy / "L2.jsonl").write_bytes(bytes(data))
    with pytest.raises(DatasetError) as exc:
        dataset.load(copy, "L2")
    msg = str(exc.value)
    assert "L2.jsonl" in msg
    assert "sha256" in msg or "checksum" in msg
    with pytest.raises(DatasetError, match="L2.jsonl"):
        dataset.verify(copy)


def test_missing_regime_file(copy):
    (copy / "L3.jsonl").unlink()
    with pytest.raises(DatasetError, match="L3.jsonl"):
        dataset.load(copy, "L3")


def test_missing_folder(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(DatasetError) as exc:
        dataset.load(missing, "L1")
    assert "not found" in str(exc.value) and str(missing) in str(exc.value)
    with pytest.raises(DatasetError, match="not found"):
        dataset.verify(missing)


def test_folder_without_manifest(tmp_path):
    (tmp_path / "L1.jsonl").write_text("{}\n")
    with pytest.raises(DatasetError, match="MANIFEST.json"):
        dataset.load(tmp_path, "L1")


def test_unreadable_manifest(copy):
    text = (copy / "MANIFEST.json").read_text()
    (copy / "MANIFEST.json").write_text(text[: len(text) // 2])
    with pytest.raises(DatasetError, match="MANIFEST.json"):
        dataset.load(copy, "L1")


def test_corrupt_line_with_consistent_checksum_names_file_and_line(copy):
    # Someone edited the file and refreshed the manifest: the parse must still
    # fail loudly with file and line.
    lines = (copy / "L1.jsonl").read_text().splitlines()
    lines[2] = lines[2][:-40]
    (copy / "L1.jsonl").write_text("\n".join(lines) + "\n")
    rehash(copy, "L1.jsonl")
    with pytest.raises(DatasetError) as exc:
        dataset.load(copy, "L1")
    assert "L1.jsonl:3" in str(exc.value)


def test_bad_grid_in_line_with_consistent_checksum(copy):
    lines = (copy / "L1.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["grid"][0] = "XFFFFFFF"
    lines[0] = json.dumps(rec, separators=(",", ":"))
    (copy / "L1.jsonl").write_text("\n".join(lines) + "\n")
    rehash(copy, "L1.jsonl")
    with pytest.raises(DatasetError, match="L1.jsonl:1"):
        dataset.load(copy, "L1")


def test_non_utf8_file_with_consistent_checksum(copy):
    data = (copy / "L1.jsonl").read_bytes()
    (copy / "L1.jsonl").write_bytes(b"\xff\xfe" + data[2:])
    rehash(copy, "L1.jsonl")
    with pytest.raises(DatasetError) as exc:
        dataset.load(copy, "L1")
    assert "L1.jsonl" in str(exc.value)


def test_manifest_missing_generation_parameters(copy):
    manifest = json.loads((copy / "MANIFEST.json").read_text())
    del manifest["master_seed"]
    (copy / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError) as exc:
        dataset.verify(copy)
    assert "master_seed" in str(exc.value)


# ---------------------------------------------------------------- CLI


def test_cli_verify_truncated(copy, capsys):
    data = (copy / "L1.jsonl").read_bytes()
    (copy / "L1.jsonl").write_bytes(data[:100])
    code, out, err = run_cli(["datasets", "verify", str(copy)], capsys)
    assert code == 2
    assert err.startswith("error:")
    assert "L1.jsonl" in err
    assert "Traceback" not in err


def test_cli_verify_and_stats_missing_folder(tmp_path, capsys):
    missing = str(tmp_path / "nope")
    for action in ("verify", "stats"):
        code, out, err = run_cli(["datasets", action, missing], capsys)
        assert code == 2
        assert err.startswith("error:") and "not found" in err


def test_cli_stats_checksum_mismatch(copy, capsys):
    data = bytearray((copy / "L3.jsonl").read_bytes())
    data[-10] = ord("9") if data[-10] != ord("9") else ord("8")
    (copy / "L3.jsonl").write_bytes(bytes(data))
    code, out, err = run_cli(["datasets", "stats", str(copy)], capsys)
    assert code == 2
    assert err.startswith("error:") and "L3.jsonl" in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--count", "0"], "count"),
        (["--count", "-2"], "count"),
        (["--size", "1x8"], "2x2"),
    ],
)
def test_cli_generate_bad_parameters(tmp_path, capsys, argv, needle):
    out_dir = tmp_path / "gen"
    code, out, err = run_cli(["datasets", "generate", "--out", str(out_dir), *argv], capsys)
    assert code == 2
    assert err.startswith("error:") and needle in err
    assert not (out_dir / "MANIFEST.json").exists()


def test_cli_bad_size_syntax_is_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["datasets", "generate", "--out", str(tmp_path / "g"), "--size", "eight"])
    assert exc.value.code == 2
    assert "size" in capsys.readouterr().err


def test_cli_verify_good_copy_and_generate(tmp_path, copy, capsys):
    code, out, err = run_cli(["datasets", "verify", str(copy), "--size", dataset.SIZES[0]], capsys)
    assert code == 0 and err == ""
    files = json.loads((copy / "MANIFEST.json").read_text())["files"]
    lives = copy / LIFETIME_DIR / "MANIFEST.json"
    lifetimes = json.loads(lives.read_text())["files"] if lives.is_file() else {}
    assert out.count(" instances, ") == len(files) and out.count(" lifetimes, ") == len(lifetimes)  # each file once
    assert out.count("OK") == len(files) + len(lifetimes)
    code, out, err = run_cli(
        ["datasets", "generate", "--out", str(tmp_path / "g"), "--count", "2", "--size", "4x4"], capsys
    )
    assert code == 0
    assert len(dataset.load(tmp_path / "g", "L2")) == 2


def test_cli_manifest_missing_parameters_exit_code(copy, capsys):
    manifest = json.loads((copy / "MANIFEST.json").read_text())
    del manifest["master_seed"]
    (copy / "MANIFEST.json").write_text(json.dumps(manifest))
    try:
        code, out, err = run_cli(["datasets", "verify", str(copy)], capsys)
    except Exception as exc:  # noqa: BLE001 - the bug: the CLI crashes instead
        pytest.fail(f"CLI crashed with {type(exc).__name__}: {exc} instead of exit code 2")
    assert code == 2 and err.startswith("error:")
