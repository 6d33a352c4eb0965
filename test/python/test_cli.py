"""pdg-opt, in-process through `pdg.cli.opt.main` and, for a few cases, as
the installed console script."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pdg
import pytest
from pdg.ir import make_context, parse_text
from sample_programs import BAD_DIM_PROGRAM

GOOD_CHUNK = "pdg.graph @good {\n  pdg.dim @t < 4\n}\n"

# Every form of expected-error location; each line's error is expected.
VERIFY_OK = """\
pdg.graph @plus {
  // expected-error @+1 {{bound of dim 't' must be at least 1}}
  pdg.dim @t < 0
}

// -----

pdg.graph @minus {
  pdg.dim @t < 0
  // expected-error @-1 {{must be at least 1, got 0}}
}

// -----

pdg.graph @above {
  pdg.dim @t < 0
  // expected-error @above {{got 0}}
}

// -----

pdg.graph @same {
  pdg.dim @t < 0 // expected-error {{'pdg.dim' op bound of dim 't'}}
}

// -----

// expected-error @below {{use of undeclared SSA value name}}
pdg.output "x" %nope : !pdg.value<[], tensor<f32>>
"""


def no_traceback(err: str) -> None:
    assert "Traceback" not in err, err


# --------------------------------------------------------------------------
# Input, output, exit codes
# --------------------------------------------------------------------------


def test_01_good_input_prints_the_ir_and_exits_0(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path))
    assert r.rc == 0
    assert r.err == ""
    assert r.out.startswith("module {\n  pdg.graph @small {\n")
    assert '%x = pdg.node "x" [t] (%arg0 = %w[] : !pdg.value<[], tensor<f32>>, ' in r.out
    assert "case (t >= 1) (%arg0 = %q[t - 1] : !pdg.value<[t], tensor<f32>>) {" in r.out
    # What it prints parses back to itself.
    assert str(parse_text(r.out, "out.mlir", make_context())) == r.out


def test_02_output_file_option(opt, write_file, tmp_path, small_program):
    path = write_file("small.mlir", small_program)
    out = tmp_path / "out.mlir"
    r = opt(str(path), "-o", str(out))
    assert r.rc == 0
    assert r.out == ""
    assert out.read_text() == opt(str(path)).out


def test_03_stdin_input_with_dash_and_by_default(opt, small_program):
    dash = opt("-", stdin=small_program)
    assert dash.rc == 0
    assert "pdg.graph @small {" in dash.out
    default = opt(stdin=small_program)
    assert default.rc == 0 and default.out == dash.out


def test_04_stdin_errors_are_reported_as_stdin(opt):
    r = opt("-", stdin=BAD_DIM_PROGRAM)
    assert r.rc == 1
    assert "<stdin>:2:3: error: 'pdg.dim' op bound of dim 't' must be at least 1" in r.err


def test_05_verifier_error_exits_1_with_file_line_col(opt, write_file):
    path = write_file("bad.mlir", BAD_DIM_PROGRAM)
    r = opt(str(path))
    assert r.rc == 1
    assert r.out == ""
    assert r.err.startswith(
        f"{path}:2:3: error: 'pdg.dim' op bound of dim 't' must be at least 1, got 0"
    )
    no_traceback(r.err)


def test_06_syntax_error_exits_1_with_file_line_col(opt, write_file):
    path = write_file("syntax.mlir", "pdg.graph @g {\n  pdg.dim @t < sometimes\n}\n")
    r = opt(str(path))
    assert r.rc == 1
    assert f"{path}:2:16: error: custom op 'pdg.dim' expected a static bound" in r.err
    no_traceback(r.err)


def test_07_failed_run_does_not_write_the_output_file(opt, write_file, tmp_path):
    path = write_file("bad.mlir", BAD_DIM_PROGRAM)
    out = tmp_path / "out.mlir"
    assert opt(str(path), "-o", str(out)).rc == 1
    assert not out.exists()


def test_08_unknown_option_exits_1_with_a_hint(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--no-such-flag")
    assert r.rc == 1
    assert r.out == ""
    assert "pdg-opt: error: unknown option '--no-such-flag'" in r.err
    assert "--list-passes" in r.err
    no_traceback(r.err)


def test_09_missing_input_file_exits_1(opt, tmp_path):
    missing = tmp_path / "nope.mlir"
    r = opt(str(missing))
    assert r.rc == 1
    assert f"pdg-opt: error: cannot read input file '{missing}': No such file" in r.err
    no_traceback(r.err)


def test_10_second_positional_argument_exits_1(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "other.mlir")
    assert r.rc == 1
    assert "unexpected extra argument (other.mlir)" in r.err


def test_11_non_utf8_input_exits_1(opt, tmp_path):
    path = tmp_path / "binary.mlir"
    path.write_bytes(b"\xff\xfe\x00pdg")
    r = opt(str(path))
    assert r.rc == 1
    assert "is not UTF-8 text" in r.err
    no_traceback(r.err)


def test_12_unwritable_output_exits_1(opt, write_file, tmp_path, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "-o", str(tmp_path / "no-dir" / "out.mlir"))
    assert r.rc == 1
    assert "cannot write output file" in r.err
    no_traceback(r.err)


def test_13_version_prints_pdg_and_mlir_versions(opt):
    r = opt("--version")
    assert r.rc == 0
    assert f"pdg {pdg.__version__}, MLIR 22.1.8" in r.out
    assert r.out.startswith(f"pdg-opt {pdg.__version__}\n")


def test_14_help_exits_0(opt):
    r = opt("--help")
    assert r.rc == 0
    for flag in ("--split-input-file", "--verify-diagnostics", "--pass-pipeline", "-o"):
        assert flag in r.out


def test_15_list_passes_includes_pdg_dce_and_canonicalize(opt):
    r = opt("--list-passes")
    assert r.rc == 0
    lines = [line.split()[0] for line in r.out.splitlines() if line.startswith("  --")]
    assert "--pdg-dce" in lines
    assert "--canonicalize" in lines
    assert "Remove nodes that no output, host callback or bound needs" in r.out


# --------------------------------------------------------------------------
# --split-input-file, --verify-diagnostics
# --------------------------------------------------------------------------


def test_16_split_input_bad_chunk_then_good_chunk(opt, write_file):
    path = write_file("split.mlir", BAD_DIM_PROGRAM + "// -----\n" + GOOD_CHUNK)
    r = opt(str(path), "--split-input-file")
    assert r.rc == 1
    assert "pdg.graph @good {" in r.out
    assert "@bad" not in r.out
    assert f"{path}:2:3: error: 'pdg.dim' op bound of dim 't'" in r.err


def test_17_split_input_reports_real_line_numbers_in_later_chunks(opt, write_file):
    path = write_file("split.mlir", GOOD_CHUNK + "// -----\n" + BAD_DIM_PROGRAM)
    r = opt(str(path), "--split-input-file")
    assert r.rc == 1
    assert r.out.count("pdg.graph @good") == 1
    assert f"{path}:6:3: error:" in r.err


def test_18_split_input_joins_outputs_with_separators(opt, write_file):
    second = GOOD_CHUNK.replace("@good", "@second")
    path = write_file("split.mlir", GOOD_CHUNK + "\n// -----\n\n" + second)
    r = opt(str(path), "--split-input-file")
    assert r.rc == 0
    first_out, second_out = r.out.split("// -----\n")
    assert "@good" in first_out and "@second" in second_out


def test_19_without_split_the_marker_is_just_a_comment(opt, write_file):
    path = write_file("split.mlir", BAD_DIM_PROGRAM + "// -----\n" + GOOD_CHUNK)
    r = opt(str(path))
    assert r.rc == 1
    assert r.out == ""


def test_20_verify_diagnostics_all_forms_succeed(opt, write_file):
    path = write_file("expected.mlir", VERIFY_OK)
    r = opt(str(path), "--split-input-file", "--verify-diagnostics")
    assert r.err == ""
    assert r.rc == 0


def test_21_verify_diagnostics_expected_error_not_produced(opt, write_file):
    text = "pdg.graph @k {\n  // expected-error @+1 {{nothing wrong here}}\n  pdg.dim @t < 4\n}\n"
    path = write_file("missing.mlir", text)
    r = opt(str(path), "--verify-diagnostics")
    assert r.rc == 1
    assert (
        f'{path}:2: error: expected error "nothing wrong here" was not produced (on line 3)'
        in r.err
    )


def test_22_verify_diagnostics_unexpected_error(opt, write_file):
    path = write_file("unexpected.mlir", GOOD_CHUNK + "// -----\n" + BAD_DIM_PROGRAM)
    r = opt(str(path), "--split-input-file", "--verify-diagnostics")
    assert r.rc == 1
    assert f"{path}:6:3: error: unexpected error: 'pdg.dim' op bound of dim 't'" in r.err


def test_23_verify_diagnostics_wrong_line_is_both_missing_and_unexpected(opt, write_file):
    text = "pdg.graph @g {\n  // expected-error @+2 {{must be at least 1}}\n  pdg.dim @t < 0\n}\n"
    path = write_file("offbyone.mlir", text)
    r = opt(str(path), "--verify-diagnostics")
    assert r.rc == 1
    assert f"{path}:3:3: error: unexpected error:" in r.err
    assert (
        f'{path}:2: error: expected error "must be at least 1" was not produced (on line 4)'
        in r.err
    )


def test_24_verify_diagnostics_wrong_message_fails(opt, write_file):
    text = "pdg.graph @g {\n  pdg.dim @t < 0 // expected-error {{must be at least 2}}\n}\n"
    path = write_file("wrongtext.mlir", text)
    r = opt(str(path), "--verify-diagnostics")
    assert r.rc == 1
    assert "was not produced" in r.err and "unexpected error" in r.err


# --------------------------------------------------------------------------
# Pass pipelines
# --------------------------------------------------------------------------


def test_25_pass_pipeline_mixing_pdg_dce_and_canonicalize(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pass-pipeline=builtin.module(pdg-dce,canonicalize)")
    assert r.rc == 0, r.err
    assert 'pdg.node "p"' not in r.out and 'pdg.node "q"' not in r.out
    assert (
        '%x = pdg.node "x" [t] (%arg0 = %w[] : !pdg.value<[], tensor<f32>>) -> tensor<f32>' in r.out
    )
    assert 'pdg.output "x" %x' in r.out


def test_26_pass_flags_equal_the_pipeline(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    flags = opt(str(path), "--pdg-dce", "--canonicalize")
    pipeline = opt(str(path), "--pass-pipeline", "builtin.module(pdg-dce,canonicalize)")
    assert flags.rc == pipeline.rc == 0
    assert flags.out == pipeline.out
    assert 'pdg.node "p"' not in flags.out


def test_27_pdg_dce_alone_keeps_unused_inputs_of_live_nodes(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pdg-dce")
    assert r.rc == 0
    assert 'pdg.node "p"' not in r.out and 'pdg.node "q"' not in r.out
    assert "%arg1 = %w[]" in r.out  # only canonicalize drops unused inputs


def test_28_nested_pipeline_on_pdg_graph(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    nested = opt(str(path), "--pass-pipeline=builtin.module(pdg.graph(pdg-dce))")
    flat = opt(str(path), "--pdg-dce")
    assert nested.rc == 0, nested.err
    assert nested.out == flat.out


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("builtin.module(pdg-dce", "unbalanced brackets"),
        ("builtin.module(pdg-dce))", "unbalanced ')'"),
        ("builtin.module(,canonicalize)", "empty pass name"),
        ("builtin.module(no-such-pass)", "unknown pass 'no-such-pass'"),
        ("any(canonicalize)", "must be builtin.module"),
    ],
)
def test_29_malformed_pipeline_exits_1_with_a_message(
    opt, write_file, small_program, pipeline, message
):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pass-pipeline", pipeline)
    assert r.rc == 1
    assert r.out == ""
    assert "pdg-opt: error: invalid pass pipeline:" in r.err
    assert message in r.err
    no_traceback(r.err)


def test_30_pipeline_and_pass_flags_together_is_an_error(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pass-pipeline=builtin.module(pdg-dce)", "--canonicalize")
    assert r.rc == 1
    assert "either with --pass-pipeline or as flags, not both" in r.err


@pytest.mark.parametrize(
    "pipeline",
    ["builtin.module(canonicalize{no-such-option=1})", "builtin.module(pdg.graph(no-such-pass))"],
)
def test_31_pipeline_with_bad_pass_options_exits_1(opt, write_file, small_program, pipeline):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pass-pipeline", pipeline)
    assert r.rc == 1
    assert "pdg-opt: error:" in r.err


def test_32_pass_flag_before_the_input_file(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    before = opt("--pdg-dce", str(path))
    after = opt(str(path), "--pdg-dce")
    assert after.rc == 0
    assert before.rc == 0, before.err
    assert before.out == after.out


def test_33_print_ir_after_all_dumps_each_pass_to_stderr(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pdg-dce", "--canonicalize", "--mlir-print-ir-after-all")
    assert r.rc == 0
    dce = r.err.index("// -----// IR Dump After PdgDeadNodeElimination (pdg-dce) //----- //")
    canon = r.err.index("// -----// IR Dump After Canonicalizer (canonicalize) //----- //")
    assert dce < canon
    after_dce, after_canon = r.err[dce:canon], r.err[canon:]
    assert 'pdg.node "p"' not in after_dce and "%arg1 = %w[]" in after_dce
    assert "%arg1 = %w[]" not in after_canon
    # The final IR goes to stdout once, without dump headers.
    assert "IR Dump" not in r.out and r.out.count("pdg.graph @small") == 1


def test_34_print_op_generic(opt, write_file, small_program):
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--mlir-print-op-generic")
    assert r.rc == 0
    assert '"pdg.graph"() <{sym_name = "small"}> ({' in r.out
    assert '"pdg.dim"() <{kind = #pdg<bound static>, size = 8 : i64, sym_name = "t"}>' in r.out
    assert '"pdg.node"' in r.out and "#pdg.access<(d0) : [d0 - 1]>" in r.out
    assert 'pdg.node "x"' not in r.out
    custom = opt(str(path)).out
    assert str(parse_text(r.out, "generic.mlir", make_context())) == custom


# --------------------------------------------------------------------------
# The installed console script
# --------------------------------------------------------------------------


def run_exe(exe: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(exe), *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_35_console_script_good_file_and_stdin(pdg_opt_exe, write_file, small_program):
    path = write_file("small.mlir", small_program)
    from_file = run_exe(pdg_opt_exe, str(path), "--pdg-dce")
    assert from_file.returncode == 0, from_file.stderr
    assert "pdg.graph @small" in from_file.stdout and 'pdg.node "p"' not in from_file.stdout
    from_stdin = run_exe(pdg_opt_exe, "-", "--pdg-dce", stdin=small_program)
    assert from_stdin.returncode == 0
    assert from_stdin.stdout == from_file.stdout


def test_36_console_script_bad_input_exits_1_without_traceback(pdg_opt_exe, write_file):
    path = write_file("bad.mlir", BAD_DIM_PROGRAM)
    r = run_exe(pdg_opt_exe, str(path))
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith(f"{path}:2:3: error: 'pdg.dim' op bound of dim 't'")
    no_traceback(r.stderr)


def test_37_console_script_unknown_option_and_version(pdg_opt_exe):
    bad = run_exe(pdg_opt_exe, "--frobnicate", stdin="")
    assert bad.returncode == 1
    assert "unknown option '--frobnicate'" in bad.stderr
    no_traceback(bad.stderr)
    version = run_exe(pdg_opt_exe, "--version")
    assert version.returncode == 0
    assert "MLIR 22.1.8" in version.stdout


def test_38_console_script_stdout_write_failure_is_reported(pdg_opt_exe, write_file, small_program):
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    path = write_file("small.mlir", small_program)
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [str(pdg_opt_exe), str(path)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert r.returncode == 1
    no_traceback(r.stderr)


def test_39_ctrl_c_is_interrupted_and_exit_130(opt, monkeypatch):
    class Interrupted(io.StringIO):
        def read(self, *args):
            raise KeyboardInterrupt

    # click turns Ctrl-C into Abort outside standalone mode.
    monkeypatch.setattr(sys, "stdin", Interrupted())
    r = opt("-")
    assert (r.rc, r.err.strip()) == (130, "pdg-opt: interrupted")


def test_40_an_escaped_eof_error_is_not_an_interrupt(opt, monkeypatch):
    """click turns an EOFError into Abort too: that one stays an error."""

    class Ended(io.StringIO):
        def read(self, *args):
            raise EOFError("ran out")

    monkeypatch.setattr(sys, "stdin", Ended())
    monkeypatch.delenv("PDG_TRACEBACK", raising=False)
    r = opt("-")
    assert r.rc == 1 and "internal error: EOFError: ran out" in r.err, r.err


def test_41_ctrl_c_while_native_extensions_load_waits_for_them(capfd):
    """A KeyboardInterrupt raised inside MLIR's or isl's initialization
    aborts the process; run_command holds Ctrl-C while it imports them."""
    import signal
    import time

    import click
    from pdg.cli.common import run_command

    finished = []

    def user_errors():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # were Ctrl-C not held, it would be raised here
        finished.append(True)
        return ()

    rc = run_command(click.Command("x", callback=lambda: None), [], "pdg", user_errors)
    assert rc == 130 and finished
    assert capfd.readouterr().err == "pdg: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
