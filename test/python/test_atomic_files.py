"""pdg.atomic_files: replacing a directory in one step (with and without
renameat2's exchange), and the cleanup of a dead writer's leftovers
(only a dead pid's of this host; a moved-aside target is put back)."""

from __future__ import annotations

import os

import pytest
from leftovers import dead_pid, leftover
from pdg import atomic_files
from pdg.atomic_files import clean_stale, discard, exchange, replace_directory, scratch_path


def tree(directory) -> dict[str, str]:
    return {p.name: p.read_text() for p in directory.iterdir()}


def allow(path) -> None:
    pass


def test_scratch_names_carry_host_and_pid_and_are_recognized(tmp_path):
    target = tmp_path / "a~b.pdgx"  # a ~ in the name is fine
    name = scratch_path(target).name
    assert name.startswith(".a~b.pdgx~pdg-scratch~") and f"~{os.getpid()}~" in name
    m = atomic_files._NAME.match(name)
    assert m and m["target"] == "a~b.pdgx" and int(m["pid"]) == os.getpid()
    assert scratch_path(target) != scratch_path(target)


@pytest.mark.skipif(atomic_files._EXCHANGE is None, reason="no renameat2 here")
def test_exchange_swaps_two_directories(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "f").write_text("A")
    (b / "f").write_text("B")
    assert exchange(a, b)
    assert (a / "f").read_text() == "B" and (b / "f").read_text() == "A"


@pytest.mark.parametrize("with_exchange", [True, False])
def test_replace_directory_old_then_new_nothing_left(tmp_path, monkeypatch, with_exchange):
    if not with_exchange:
        monkeypatch.setattr(atomic_files, "_EXCHANGE", None)
    elif atomic_files._EXCHANGE is None:
        pytest.skip("no renameat2 here")
    target = tmp_path / "art"
    for version in ("one", "two"):
        scratch = scratch_path(target)
        scratch.mkdir()
        (scratch / "f").write_text(version)
        replace_directory(scratch, target, allow)
        assert tree(target) == {"f": version}
        assert [p.name for p in tmp_path.iterdir()] == ["art"]


def test_replace_directory_asks_before_replacing(tmp_path):
    target = tmp_path / "art"
    target.mkdir()
    (target / "keep").write_text("mine")
    scratch = scratch_path(target)
    scratch.mkdir()

    def refuse(path):
        raise PermissionError("not yours")

    with pytest.raises(PermissionError):
        replace_directory(scratch, target, refuse)
    assert tree(target) == {"keep": "mine"}


def test_clean_stale_removes_only_dead_writers_of_this_host(tmp_path):
    dead = leftover(tmp_path, "a.pdgx", "scratch", dead_pid())
    live = leftover(tmp_path, "a.pdgx", "scratch", os.getppid())
    mine = leftover(tmp_path, "a.pdgx", "scratch", os.getpid())
    elsewhere = leftover(tmp_path, "a.pdgx", "scratch", dead_pid(), host="another-host")
    user = tmp_path / ".a.pdgx.bak"
    user.mkdir()
    assert clean_stale(tmp_path) == [dead]
    assert not dead.exists()
    assert live.exists() and mine.exists() and elsewhere.exists() and user.exists()


def test_clean_stale_puts_a_moved_aside_target_back(tmp_path):
    # Killed between moving the old artifact aside and moving the new one in
    # (where no exchange exists): the old one is put back.
    aside = leftover(tmp_path, "a.pdgx", "old", dead_pid())
    clean_stale(tmp_path)
    assert tree(tmp_path / "a.pdgx") == {"x": "old"} and not aside.exists()
    # Where the target is there again, the moved-aside copy is only removed.
    aside = leftover(tmp_path, "a.pdgx", "old", dead_pid())
    clean_stale(tmp_path)
    assert not aside.exists() and tree(tmp_path / "a.pdgx") == {"x": "old"}


def test_discard_removes_a_tree_and_tolerates_it_gone(tmp_path):
    entry = tmp_path / "e"
    entry.mkdir()
    (entry / "f").write_text("x")
    discard(entry)
    discard(entry)
    assert list(tmp_path.iterdir()) == []
