"""The command-line examples of README.md and docs/*.md, run as written.

- Transcripts: in ```text blocks, a line `$ tally ...` is a command and the lines after it, up
  to the next `$ ` line, are what it prints (stdout); `...` there stands for any text (the
  seconds of --json). On a machine with a GPU the transcripts' `"backend": "cpu"` reads
  `"backend": "cuda"` (--backend auto takes the GPU).
- Commands: in ```sh blocks, every line that runs the tool (`tally ...` or `mpirun -np N tally
  ...`): it must succeed, and under mpirun print what one process prints for the same file.
  `--backend cuda` lines need a GPU (skipped without one), mpirun lines an MPI build.

Input files the examples name are made here: scikit-learn's iris.csv (skipped without
scikit-learn) and big.npy (random float64). A command naming any other file fails this test:
add the file to INPUTS. docs/performance.md and docs/benchmarks/ are measurement logs, not
examples: left out.
"""
import os
import re
import shlex
import shutil
import subprocess

import numpy as np
import pytest

from test_cli import BIN, ROOT, gpu_present

DOCS = [ROOT / "README.md"] + [p for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "performance.md"]
MPIRUN = shutil.which("mpirun")
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(lang):
    for path in DOCS:
        for m in FENCE.finditer(path.read_text()):
            if m.group(1) == lang:
                yield path.relative_to(ROOT), m.group(2)


def transcripts():
    out = []
    for where, body in blocks("text"):
        cmd = None
        for line in body.splitlines():
            if line.startswith("$ "):
                cmd = [line[2:], []]
                out.append((str(where), *cmd))
            elif cmd is not None:
                out[-1][2].append(line)
    return [(w, c, "\n".join(lines)) for w, c, lines in out]


def commands():
    out = []
    for where, body in blocks("sh"):
        for line in body.splitlines():
            words = shlex.split(line, comments=True)
            if "tally" in words and (words[0] == "tally" or words[0] == "mpirun"):
                out.append((str(where), words))
    return out


def _iris(folder):
    sklearn = pytest.importorskip("sklearn")
    src = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data", "iris.csv")
    shutil.copy(src, folder / "iris.csv")


def _big(folder):
    np.save(folder / "big.npy", np.random.default_rng(11).standard_normal(100_003) * 1e3)


INPUTS = {"iris.csv": _iris, "big.npy": _big}


def prepare(words, folder):
    """Makes the input files `words` name; fails for an input this test does not know."""
    for w in words:
        if re.fullmatch(r"[\w.-]+\.(csv|npy|gz)", w):
            assert w in INPUTS, f"the example reads {w}: add it to INPUTS in {__file__}"
            INPUTS[w](folder)


def tool(words):
    return [BIN if w == "tally" else w for w in words]


def test_the_docs_have_examples():
    assert len(transcripts()) >= 2 and len(commands()) >= 2


@pytest.mark.parametrize("where, command, expected",
                         [pytest.param(*t, id=f"{t[0]}: $ {t[1]}") for t in transcripts()])
def test_transcript(tmp_path, where, command, expected):
    words = shlex.split(command)
    assert words[0] == "tally", (where, command)
    prepare(words, tmp_path)
    r = subprocess.run(tool(words), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (where, command, r.stderr)
    if gpu_present():
        expected = expected.replace('"backend": "cpu"', '"backend": "cuda"')
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    assert re.fullmatch(pattern, r.stdout.rstrip("\n")), (where, command, expected, r.stdout)


@pytest.mark.parametrize("where, words", [pytest.param(*c, id=f"{c[0]}: {' '.join(c[1])}") for c in commands()])
def test_command(tmp_path, where, words):
    if "--backend" in words and words[words.index("--backend") + 1] == "cuda" and not gpu_present():
        pytest.skip("--backend cuda: no GPU here")
    prepare(words, tmp_path)
    if words[0] == "mpirun":
        if MPIRUN is None:
            pytest.skip("mpirun is not installed")
        r = subprocess.run(tool(words), cwd=tmp_path, capture_output=True, text=True, timeout=300, env=MPI_ENV)
        if "needs MPI" in r.stderr:
            pytest.skip("this build of tally has no MPI")
        assert r.returncode == 0, (where, words, r.stderr)
        # rank 0 prints what one process prints
        single = words[words.index("tally"):]
        single = [w for w in single if w != "--distributed"]
        one = subprocess.run(tool(single), cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert one.returncode == 0, one.stderr
        assert r.stdout == one.stdout, (where, words, r.stdout, one.stdout)
    else:
        r = subprocess.run(tool(words), cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (where, words, r.stderr)
        assert r.stdout.strip() != ""
