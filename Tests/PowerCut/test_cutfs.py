"""cutfs's own semantics: what survives a cut and what does not (see cutfs.c for the model).

    python3 Tests/PowerCut/test_cutfs.py [CUTFS_BINARY]

Each test works in a fresh backing directory: it sets up a durable starting state (mount, make
it, `sync`), does something, cuts, remounts and looks. Needs /dev/fuse and root (or fusermount3).
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cutfs  # noqa: E402

BINARY = None


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write(path, data, sync=False, mode="wb"):
    with open(path, mode) as f:
        f.write(data)
        f.flush()
        if sync:
            os.fsync(f.fileno())


def read(path):
    with open(path, "rb") as f:
        return f.read()


class CutFSTests(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="cutfs-test-")
        self.backing = os.path.join(self.work, "backing")
        self.mnt = os.path.join(self.work, "mnt")
        self.fs = cutfs.CutFS(BINARY, self.backing, self.mnt)
        self.fs.mount()

    def tearDown(self):
        self.fs.unmount()
        self.assertFalse(cutfs.mounted(self.mnt))
        shutil.rmtree(self.work)

    def p(self, *parts):
        return os.path.join(self.mnt, *parts)

    def power_cut(self, *still_open):
        self.fs.cut()
        with self.assertRaises(OSError):
            os.listdir(self.mnt)  # a dead disk
        for thing in still_open:  # as the processes holding them die
            try:
                thing.close()
            except Exception:
                pass
        self.fs.unmount()
        self.fs.mount()

    # Files

    def test_a_write_without_fsync_is_lost(self):
        write(self.p("a"), b"old")
        self.fs.sync()
        write(self.p("a"), b"new and longer")
        self.assertEqual(read(self.p("a")), b"new and longer")
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"old")

    def test_a_write_with_fsync_is_kept(self):
        write(self.p("a"), b"old")
        self.fs.sync()
        write(self.p("a"), b"new and longer", sync=True)
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"new and longer")

    def test_fdatasync_keeps_data_and_size(self):
        write(self.p("a"), b"x")
        self.fs.sync()
        with open(self.p("a"), "ab") as f:
            f.write(b"y" * 10000)
            f.flush()
            os.fdatasync(f.fileno())
            f.write(b"z")  # after the sync: lost
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"x" + b"y" * 10000)

    def test_only_writes_before_the_last_fsync_are_kept(self):
        write(self.p("a"), b"")
        self.fs.sync()
        with open(self.p("a"), "r+b") as f:
            for i in range(5):
                f.write(bytes([65 + i]) * 100)
                f.flush()
                if i == 2:
                    os.fsync(f.fileno())
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"A" * 100 + b"B" * 100 + b"C" * 100)

    def test_a_truncation_without_fsync_is_lost(self):
        write(self.p("a"), b"0123456789")
        self.fs.sync()
        os.truncate(self.p("a"), 3)
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"0123456789")

    def test_an_fsync_through_a_read_only_descriptor_counts(self):
        write(self.p("a"), b"1")
        self.fs.sync()
        write(self.p("a"), b"22")
        fd = os.open(self.p("a"), os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"22")

    # Directory entries

    def test_a_new_file_synced_but_not_its_directory_is_lost(self):
        write(self.p("new"), b"data", sync=True)
        self.power_cut()
        self.assertFalse(os.path.exists(self.p("new")))

    def test_a_new_file_with_its_directory_synced_is_kept(self):
        write(self.p("new"), b"data", sync=True)
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(read(self.p("new")), b"data")

    def test_a_new_entry_whose_file_was_never_synced_comes_back_empty(self):
        write(self.p("new"), b"data")
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(read(self.p("new")), b"")

    def test_the_data_synced_before_the_directory_is_what_comes_back(self):
        write(self.p("new"), b"first", sync=True)
        write(self.p("new"), b"second")
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(read(self.p("new")), b"first")

    def test_a_rename_without_a_directory_fsync_is_lost(self):
        write(self.p("a"), b"A")
        self.fs.sync()
        os.rename(self.p("a"), self.p("b"))
        self.power_cut()
        self.assertEqual(sorted(os.listdir(self.mnt)), ["a"])

    def test_a_rename_with_a_directory_fsync_is_kept(self):
        write(self.p("a"), b"A")
        self.fs.sync()
        os.rename(self.p("a"), self.p("b"))
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(sorted(os.listdir(self.mnt)), ["b"])
        self.assertEqual(read(self.p("b")), b"A")

    def test_the_atomic_replace_idiom_keeps_old_or_new_never_neither(self):
        write(self.p("state"), b"old")
        self.fs.sync()
        write(self.p("state.tmp"), b"new", sync=True)
        os.rename(self.p("state.tmp"), self.p("state"))
        self.power_cut()  # no directory fsync: the old one
        self.assertEqual(read(self.p("state")), b"old")
        self.assertEqual(os.listdir(self.mnt), ["state"])
        write(self.p("state.tmp"), b"new", sync=True)
        os.rename(self.p("state.tmp"), self.p("state"))
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(read(self.p("state")), b"new")

    def test_a_rename_over_a_file_without_fsync_keeps_the_replaced_files_data(self):
        write(self.p("a"), b"A")
        write(self.p("b"), b"B")
        self.fs.sync()
        os.rename(self.p("a"), self.p("b"))
        write(self.p("b"), b"changed", mode="ab")
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"A")
        self.assertEqual(read(self.p("b")), b"B")

    def test_an_unlink_without_a_directory_fsync_is_undone(self):
        write(self.p("a"), b"kept")
        self.fs.sync()
        os.unlink(self.p("a"))
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"kept")

    def test_an_unlink_with_a_directory_fsync_is_kept(self):
        write(self.p("a"), b"gone")
        self.fs.sync()
        os.unlink(self.p("a"))
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(os.listdir(self.mnt), [])

    def test_mkdir_needs_the_parents_fsync_and_its_files_need_its_own(self):
        os.mkdir(self.p("d"))
        write(self.p("d", "f"), b"F", sync=True)
        fsync_dir(self.mnt)
        self.power_cut()
        self.assertEqual(os.listdir(self.p("d")), [])  # d is there, empty: d was never synced
        write(self.p("d", "f"), b"F", sync=True)
        fsync_dir(self.p("d"))
        self.power_cut()
        self.assertEqual(read(self.p("d", "f")), b"F")

    def test_a_directory_made_but_not_synced_into_its_parent_is_lost(self):
        os.mkdir(self.p("d"))
        fsync_dir(self.p("d"))
        self.power_cut()
        self.assertEqual(os.listdir(self.mnt), [])

    def test_a_move_between_directories_needs_both_fsyncs(self):
        os.mkdir(self.p("x"))
        os.mkdir(self.p("y"))
        write(self.p("x", "f"), b"F")
        self.fs.sync()
        os.rename(self.p("x", "f"), self.p("y", "f"))
        fsync_dir(self.p("x"))  # the source only: in neither
        self.power_cut()
        self.assertEqual(os.listdir(self.p("x")) + os.listdir(self.p("y")), [])

    def test_rmdir_is_undone_without_the_parents_fsync(self):
        os.mkdir(self.p("d"))
        write(self.p("d", "f"), b"F")
        self.fs.sync()
        os.unlink(self.p("d", "f"))
        fsync_dir(self.p("d"))
        os.rmdir(self.p("d"))
        self.power_cut()
        self.assertEqual(os.listdir(self.p("d")), [])

    def test_a_hard_link_shares_its_data(self):
        write(self.p("a"), b"A")
        self.fs.sync()
        os.link(self.p("a"), self.p("b"))
        fsync_dir(self.mnt)
        write(self.p("a"), b"AA", sync=True)
        self.power_cut()
        self.assertEqual(read(self.p("b")), b"AA")
        self.assertEqual(os.stat(self.p("a")).st_ino, os.stat(self.p("b")).st_ino)

    def test_an_unlinked_file_still_open_can_be_synced_without_harm(self):
        write(self.p("a"), b"A")
        self.fs.sync()
        with open(self.p("a"), "r+b") as f:
            os.unlink(self.p("a"))
            f.write(b"BB")
            f.flush()
            os.fsync(f.fileno())
        self.power_cut()  # the directory was not synced: the name is back, with the synced data
        self.assertEqual(read(self.p("a")), b"BB")

    def test_cut_after_n_syncs_keeps_the_nth_and_nothing_after(self):
        self.fs.cut_after(2)
        write(self.p("a"), b"1", sync=True)   # sync 1
        write(self.p("b"), b"2", sync=True)   # sync 2: the cut, right after
        self.assertTrue(self.fs.is_cut())
        with self.assertRaises(OSError):
            write(self.p("c"), b"3", sync=True)
        self.fs.unmount()
        self.fs.mount()
        self.assertFalse(self.fs.is_cut())
        self.assertEqual(os.listdir(self.mnt), [])  # the directory was never synced
        self.fs.cut_after(3)
        write(self.p("a"), b"1", sync=True)
        fsync_dir(self.mnt)
        write(self.p("a"), b"11", sync=True)  # the third: kept
        self.power_cut()
        self.assertEqual(read(self.p("a")), b"11")

    def test_cut_after_n_syncs_with_stop_stops_the_process_that_made_the_sync(self):
        self.fs.cut_after(1, stop_caller=True)
        program = (f"import os; f = open({self.p('a')!r}, 'wb'); f.write(b'x'); f.flush(); "
                   "os.fsync(f.fileno()); print('answered', flush=True)")
        child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE)
        try:
            _, status = os.waitpid(child.pid, os.WUNTRACED)
            self.assertTrue(os.WIFSTOPPED(status), "the process went on past the sync that cut the power")
        finally:
            child.kill()
            output = child.communicate()[0]
        self.assertEqual(output, b"")
        self.assertTrue(self.fs.is_cut())

    # Whole state

    def test_a_clean_unmount_keeps_everything(self):
        write(self.p("a"), b"unsynced")
        os.mkdir(self.p("d"))
        self.fs.unmount()
        self.fs.mount()
        self.assertEqual(read(self.p("a")), b"unsynced")
        self.assertTrue(os.path.isdir(self.p("d")))

    def test_the_backing_directory_holds_exactly_the_durable_state_after_a_cut(self):
        write(self.p("kept"), b"K", sync=True)
        write(self.p("lost"), b"L", sync=True)
        fsync_dir(self.mnt)
        os.unlink(self.p("lost"))
        write(self.p("new"), b"N", sync=True)
        self.fs.cut()
        self.assertEqual(sorted(os.listdir(self.backing)), ["kept", "lost"])

    def test_sqlite_in_wal_mode_keeps_every_committed_transaction(self):
        path = self.p("db.sqlite")
        db = sqlite3.connect(path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE t (n INTEGER)")
        db.commit()
        for n in range(50):
            db.execute("INSERT INTO t VALUES (?)", (n,))
            db.commit()
        db.execute("INSERT INTO t VALUES (999)")  # never committed
        self.power_cut(db)
        db2 = sqlite3.connect(path)
        self.assertEqual(db2.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        self.assertEqual([r[0] for r in db2.execute("SELECT n FROM t ORDER BY n")], list(range(50)))
        db2.close()

    def test_sqlite_with_synchronous_off_can_lose_commits(self):
        # The test that shows the cut is real: without fsync, committed rows go.
        path = self.p("db.sqlite")
        db = sqlite3.connect(path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (n INTEGER)")
        db.commit()
        self.fs.sync()
        db.execute("PRAGMA synchronous=OFF")
        for n in range(10):
            db.execute("INSERT INTO t VALUES (?)", (n,))
            db.commit()
        self.power_cut(db)
        db2 = sqlite3.connect(path)
        self.assertEqual(db2.execute("SELECT count(*) FROM t").fetchone()[0], 0)
        db2.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BINARY = os.path.abspath(sys.argv.pop(1))
    else:
        BINARY = cutfs.build(os.path.join(cutfs.HERE, "..", "..", ".build", "cutfs"))
    unittest.main(verbosity=2)
