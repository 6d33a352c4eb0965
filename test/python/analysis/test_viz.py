"""`pdg viz` / `pdg-opt --pdg-view-graph`: DOT and SVG of a graph with its
stores and loop, for the 2-layer decoder."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

from decode_programs import small_decode
from pdg.cli.viz import write_views

SVG = "{http://www.w3.org/2000/svg}"


def test_01_decoder_views(tmp_path):
    module = small_decode("window:8", vocab=64, d_model=32, heads=4, max_len=64).program.build()
    dot, svg = write_views(module, str(tmp_path / "g.svg"), plan=True)
    text = dot.read_text()
    assert text.startswith('digraph "decode"') and "subgraph cluster_loop" in text
    assert '"h0_attn_k_cache" -> ' in text
    assert "store window, [B, 8]" in text
    # The recurrence (next[t - 1] read by the token choice) is the one
    # dashed, loop-carried edge.
    dashed = [line for line in text.splitlines() if "style=dashed" in line]
    assert dashed == ['  "next" -> "where" [label="[b, (t + -1)]", style=dashed];']
    root = ET.parse(svg).getroot()
    boxes = root.findall(f"{SVG}rect")
    assert len(boxes) == len(
        [n for n in text.splitlines() if "[label=" in n and "->" not in n and "output" not in n]
    )
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert "where reads next[b, (t + -1)]" in titles


def test_02_pdg_opt_view_graph_flag(tmp_path):
    repo = __file__.rsplit("/test/", 1)[0]
    out = tmp_path / "v.dot"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pdg.cli.opt",
            f"{repo}/examples/decode_step.mlir",
            "--pdg-plan-storage",
            "--pdg-schedule",
            f"--pdg-view-graph={out}",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "pdg.graph @decode" in r.stdout
    assert '"k" [label="k\\n[b, t] 32xf32\\nstore window, [B, 16]"]' in out.read_text()
    assert (tmp_path / "v.svg").read_text().startswith("<svg")


# Names may hold any character; quotes, backslashes and line breaks once
# went into the DOT text raw (a broken file) and control characters into
# the SVG (not XML).
ODD_NAMES = r"""
pdg.graph @"g\"}" {
  pdg.dim @t < 4
  %w = pdg.input "w\"q\\" : !pdg.value<[], tensor<f32>>
  %x = pdg.node "x}\0A\01y" [t] (%a = %w[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "out\"" %x : !pdg.value<[t], tensor<f32>>
}
"""


def test_03_names_with_quotes_and_line_breaks_are_escaped(tmp_path):
    from pdg.ir import make_context, parse_text

    module = parse_text(ODD_NAMES, "odd.mlir", make_context())
    dot, svg = write_views(module, str(tmp_path / "odd.svg"), plan=True)
    lines = dot.read_text().splitlines()
    assert lines[0] == r'digraph "g\"}" {'
    w, x = r'"w\"q\\"', r'"x}\n\x01y"'
    assert f'  {w} -> {x} [label="[]"];' in lines
    assert f'  {x} -> "out_out\\"";' in lines
    # Every line is one statement: no name broke a line or a string.
    assert all(re.sub(r"\\.", "", line).count('"') % 2 == 0 for line in lines), lines
    root = ET.parse(svg).getroot()
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert 'pdg.graph @g"}' in texts and "x}\n\ufffdy" in texts
