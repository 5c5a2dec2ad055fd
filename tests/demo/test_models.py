"""The main job's CNN and Transformer (``minilazy.demo.models``) train lazily: the loss falls, the
first step compiles once, later steps never, and ``python -m minilazy --model`` runs them."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import minilazy as ml
from minilazy.__main__ import run
from minilazy.demo import models
from minilazy.demo.corpus import characters
from minilazy.demo.datasets import digits


def _check(run: models.Run) -> None:
    assert all(math.isfinite(v) for v in run.losses)
    assert run.losses[-1] < run.losses[0]
    assert run.first_compiles == 1  # the whole step, forward, backward and update, is one graph
    assert run.later_compiles == 0  # new data, a new learning rate: the same program
    assert run.cache_hits == len(run.losses) - 1
    assert all(np.isfinite(t.numpy()).all() for t in run.params.values())


def test_cnn_loss_falls_with_one_compile():
    x, y = digits(256, seed=3)

    def batch(i: int) -> tuple[ml.Tensor, ml.Tensor]:
        lo = 32 * (i % 8)
        return ml.asarray(x[lo:lo + 32]), ml.asarray(y[lo:lo + 32])

    run = models.fit(models.cnn_loss, models.cnn_params(), batch, steps=8, lr=3e-3)
    _check(run)
    assert run.nodes > 100 and run.ops_per_step > 100


def test_transformer_loss_falls_with_one_compile():
    cfg = models.Config(layers=1, context=16)
    _, ids = characters()
    windows = np.stack([ids[s:s + cfg.context + 1] for s in range(0, 8 * 40, 40)])

    def loss(p: models.Params, a: ml.Tensor, b: ml.Tensor) -> ml.Tensor:
        return ml.nn.cross_entropy(models.transformer_logits(p, a, cfg), b)

    run = models.fit(loss, models.transformer_params(cfg), lambda i: (
        ml.asarray(windows[:, :-1]), ml.asarray(windows[:, 1:])), steps=6, lr=3e-3,
        weight_decay=0.01)
    _check(run)
    assert run.losses[0] > 3.0  # about log(29) at the start: nothing learned yet


def test_greedy_sampling_compiles_once_for_any_length():
    p = models.transformer_params(models.Config(layers=1))
    cfg = models.Config(layers=1)
    models.sample(p, "a", 1, cfg)  # compiles the decoding program
    before = ml.metrics().compiles
    text = models.sample(p, "a lazy", 5, cfg)
    assert len(text) == 11 and ml.metrics().compiles == before


def test_main_job_runs_the_cnn_from_the_command_line():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "minilazy", "--model", "cnn", "--steps", "3"],
                         capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    assert "a CNN" in out and "(records, 1 compile)" in out
    assert "0 compiles in the steady state" in out and "test accuracy" in out


def test_devices_is_for_the_mlp_only():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "minilazy", "--model", "cnn", "--devices", "2"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "mlp" in proc.stderr


@pytest.mark.parametrize(("argv", "says"), [
    (["--steps", "0"], "--steps: must be at least 1, got 0"),
    (["--steps", "-5"], "--steps: must be at least 1, got -5"),
    (["--steps", "ten"], "--steps: expected a whole number, got 'ten'"),
    (["--devices", "0"], "--devices: must be at least 1, got 0"),
    (["--devices", "3"], "the batch of 128 must split evenly; use one of 1, 2, 4, 8, 16, 32, 64, "
                         "128"),
    (["--model", "cnn", "--devices", "2"], "only the mlp model"),
    (["--model", "rnn"], "invalid choice: 'rnn'"),
    # What the command cannot run is refused too, never a traceback (issue 41): absurd sizes,
    # other number forms, other scripts' digits, numbers past what Python parses.
    (["--steps", "99999999999999999999999"], "--steps: must be at most 1000000, got 9999"),
    (["--steps", "1000001"], "--steps: must be at most 1000000, got 1000001"),
    (["--steps", "-99999999999999999999999"], "--steps: must be at least 1, got -9999"),
    (["--steps", "9" * 5000], "--steps: must be at most 1000000"),
    (["--steps", "1.5"], "--steps: expected a whole number, got '1.5'"),
    (["--steps", "1e3"], "--steps: expected a whole number, got '1e3'"),
    (["--steps", "0x10"], "--steps: expected a whole number, got '0x10'"),
    (["--steps", "\u0663"], "--steps: expected a whole number"),  # an Arabic-Indic 3
    (["--steps", ""], "--steps: expected a whole number, got ''"),
    (["--steps", "nan"], "--steps: expected a whole number, got 'nan'"),
    (["--model", "transformer", "--steps", "99999999999999999999999"], "must be at most"),
    (["--devices", "99999999999999999999999"], "--devices: must be at most 128"),
    (["--devices", "256"], "--devices: must be at most 128, got 256"),
    (["--devices", "-1"], "--devices: must be at least 1, got -1"),
    (["--devices", "two"], "--devices: expected a whole number, got 'two'"),
    (["--model", ""], "invalid choice: ''"),
])
def test_the_command_refuses_bad_arguments_before_anything_runs(argv, says, capsys):
    """argparse's exit status 2 and usage line, with a message that says what is allowed."""
    ml.reset_metrics()
    with pytest.raises(SystemExit) as e:
        run(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m minilazy") and says in err, err
    assert ml.metrics().ops_recorded == 0


def test_an_absurd_step_count_is_a_usage_error_from_the_command_line():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "minilazy", "--steps", "9" * 23],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "must be at most 1000000" in proc.stderr


def test_a_second_run_says_it_loaded_the_step_from_the_disk_cache(tmp_path, capsys):
    """The second ``python -m minilazy`` (a fresh process: nothing in memory) loads the step: it
    says so, and never claims a compile (it said "1 compile of the whole step")."""
    ml.set_cache_dir(tmp_path)
    try:
        said = []
        for _ in range(2):
            ml.clear_cache()  # as a fresh process: the disk cache only
            run(["--steps", "2"])
            said.append(capsys.readouterr().out)
    finally:
        ml.set_cache_dir(None)
    assert "(records, compiles: 1 compile of the whole step: " in said[0], said[0]
    assert "(records, loads: 1 program of the whole step from the disk cache" in said[1], said[1]
    assert "compile of the whole step" not in said[1]
    assert "lazy, later steps" in said[1] and "0 compiles, 1 cache hits" in said[1]


def test_a_model_loaded_from_the_disk_cache_is_not_counted_as_compiled(tmp_path, capsys):
    x, y = digits(32)
    xs, ys = ml.asarray(x), ml.asarray(y)
    ml.set_cache_dir(tmp_path)
    try:
        runs = []
        for _ in range(2):
            ml.clear_cache()
            runs.append(models.fit(models.cnn_loss, models.cnn_params(), lambda i: (xs, ys),
                                   steps=2, lr=1e-2))
    finally:
        ml.set_cache_dir(None)
    assert (runs[0].first_compiles, runs[0].first_loads) == (1, 0)
    assert (runs[1].first_compiles, runs[1].first_loads) == (0, 1)
    models.report(runs[1])
    out = capsys.readouterr().out
    assert "(records, 0 compiles, 1 loaded from the disk cache)" in out, out


def test_the_help_is_plain_text_with_the_defaults(capsys):
    with pytest.raises(SystemExit):
        run(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out  # no reStructuredText
    assert "300 for mlp, 200 for cnn, 300 for transformer" in " ".join(out.split())
    assert "784-256-10" in out


def test_one_step_trains_and_says_there_is_no_steady_state_yet(capsys):
    """``--steps 1`` (a ZeroDivisionError once) prints the first step and makes no claim about
    later steps; the MLP prints the size of its graph, as the other models do."""
    run(["--model", "mlp", "--steps", "1"])
    out = capsys.readouterr().out
    assert "one step only" in out and "nodes)" in out and "final loss" in out
    assert "lazy, later steps" not in out
    models.report(models.Run({}, [2.0], 0.5, 0.0, 1, 0, 0, 10, 8.0))
    out = capsys.readouterr().out
    assert "one step only" in out and "steady state" in out and "0 compiles" not in out


def test_the_first_step_says_it_compiles_before_it_does(capsys):
    x, y = digits(32)
    xs, ys = ml.asarray(x), ml.asarray(y)
    models.fit(models.cnn_loss, models.cnn_params(), lambda i: (xs, ys), steps=2, lr=1e-2,
               log_every=1)
    lines = capsys.readouterr().out.splitlines()
    assert "compiling" in lines[0] and "loss" in lines[1]
