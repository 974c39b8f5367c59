"""Disk tier of the KV cache (SGLang's HiCache with the file storage backend) on the real
model: with a KV pool too small to keep more than one document, a prefix evicted from RAM comes
back from disk (cached_tokens and the hicache stats show the disk hit) with the same greedy
output as a server without the tier; a restarted server with the same directory hits the
stored prefixes; /flush_cache keeps the disk tier (as SGLang's keeps its storage backend);
a full disk (a small tmpfs, mounted in a user namespace) skips writes with a warning and
changes no output; corrupt block files are recomputed with a logged warning, and removing the
directory while serving changes no output; bad flags are refused at start-up."""

import pathlib
import random
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import Server, _binary, _model

WORDS = ("time year people way day man thing woman life child world school state family "
         "student group country problem hand part place case week company system program "
         "question work government number night point home water room mother area money "
         "story fact month lot right study book eye job word business issue side kind head").split()
POOL = ["--max-total-tokens", "1024", "--chunked-prefill-size", "512"]


def document(i, n_words=420):
    rng = random.Random(7000 + i)
    words = " ".join(rng.choice(WORDS) for _ in range(n_words))
    return f"Document {i}.\n{words}\nQuestion: what is the first word? Answer:"


def tier_args(directory, policy="write_back"):
    return POOL + ["--enable-hierarchical-cache", "--hicache-storage-backend", "file",
                   "--hicache-write-policy", policy, "--hicache-storage-dir", str(directory),
                   "--hicache-storage-size", "1"]


def generate(srv, text, max_new_tokens=8):
    r = srv.post("/generate", {"text": text, "sampling_params": {
        "temperature": 0, "max_new_tokens": max_new_tokens}}, timeout=600)
    assert r.status_code == 200, r.text
    return r.json()


def hicache(srv):
    return srv.server_info()["internal_states"][0]["hicache"]


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("hicache")


@pytest.fixture(scope="module")
def reference():
    srv = Server(extra_args=POOL)
    yield srv
    assert srv.stop() == 0, srv.log_tail()


@pytest.fixture(scope="module")
def expected(reference):
    return {i: generate(reference, document(i))["text"] for i in range(3)}


def test_disk_hit_after_eviction_gives_the_same_output(store_dir, expected):
    srv = Server(extra_args=tier_args(store_dir))
    try:
        info = srv.server_info()
        assert info["enable_hierarchical_cache"] is True
        assert info["hicache_storage_backend"] == "file"
        assert info["hicache_write_policy"] == "write_back"
        first = generate(srv, document(0))
        assert first["text"] == expected[0]
        # Two more documents evict the first from the 1024-token pool (write-back stores it).
        for i in (1, 2):
            assert generate(srv, document(i))["text"] == expected[i]
        before = hicache(srv)
        assert before["enabled"] is True
        assert before["blocks_stored"] > 0 and before["disk_tokens"] > 0
        again = generate(srv, document(0))
        assert again["text"] == expected[0]
        after = hicache(srv)
        gained = after["disk_hit_tokens"] - before["disk_hit_tokens"]
        assert gained >= 64, (before, after)
        assert again["meta_info"]["cached_tokens"] >= gained
        assert after["bytes_loaded"] > before["bytes_loaded"]
        assert after["load_failures"] == 0
        metrics = srv.get("/metrics").text
        for name in ("hicache_disk_tokens", "hicache_disk_hit_tokens_total",
                     "hicache_loaded_bytes_total", "hicache_stored_bytes_total",
                     "hicache_load_bandwidth_bytes_per_second"):
            assert name in metrics, name
    finally:
        assert srv.stop() == 0, srv.log_tail()


def test_restart_with_the_same_directory_hits(store_dir, expected):
    assert any(store_dir.glob("*.kvb"))
    srv = Server(extra_args=tier_args(store_dir))
    try:
        assert hicache(srv)["disk_tokens"] > 0
        out = generate(srv, document(0))
        assert out["text"] == expected[0]
        assert hicache(srv)["disk_hit_tokens"] >= 64
        assert out["meta_info"]["cached_tokens"] >= 64
    finally:
        assert srv.stop() == 0, srv.log_tail()


def test_flush_cache_keeps_the_disk_tier(store_dir, expected):
    srv = Server(extra_args=tier_args(store_dir))
    try:
        stored = hicache(srv)["disk_tokens"]
        assert stored > 0
        r = srv.post("/flush_cache")
        assert r.status_code == 200, r.text
        assert hicache(srv)["disk_tokens"] == stored
        out = generate(srv, document(0))
        assert out["text"] == expected[0]
        assert hicache(srv)["disk_hit_tokens"] >= 64
    finally:
        assert srv.stop() == 0, srv.log_tail()


# Runs the rest of the command line with a tmpfs of the given size mounted on the given
# directory, in a user and mount namespace of its own (no privileges needed where unprivileged
# user namespaces are allowed; the mount vanishes with the process).
MOUNT_TMPFS = 'mount -t tmpfs -o size="$1" tmpfs "$0" && shift && exec "$@"'


def tmpfs_wrapper(directory, size):
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", MOUNT_TMPFS,
            str(directory), str(size)]


def test_full_disk_skips_writes_with_a_warning_and_changes_no_output(store_dir, expected):
    blocks = sorted(store_dir.glob("*.kvb"))
    assert blocks, "needs the block files the tests above stored"
    block_bytes = blocks[0].stat().st_size
    with tempfile.TemporaryDirectory(prefix="radixlm-full-disk-") as mount_point:
        # Room for two blocks and half of a third (tmpfs counts whole 4 KiB pages).
        size = (block_bytes * 5 // 2) // 4096 * 4096
        if shutil.which("unshare") is None:
            pytest.skip("no unshare(1) here to mount a small tmpfs for the full disk")
        probe = subprocess.run(tmpfs_wrapper(mount_point, size) + ["true"], capture_output=True,
                               text=True, timeout=60)
        if probe.returncode != 0:
            pytest.skip("cannot mount a tmpfs in a user namespace here (needs unprivileged "
                        f"user namespaces): {probe.stderr.strip()}")
        srv = Server(extra_args=tier_args(mount_point, "write_through"),
                     wrapper=tmpfs_wrapper(mount_point, size))
        try:
            first = generate(srv, document(0))
            assert first["text"] == expected[0]
            stats = hicache(srv)
            deadline = time.time() + 30  # the writer thread may still be at its queue
            while stats["write_failures"] == 0 and time.time() < deadline:
                time.sleep(0.2)
                stats = hicache(srv)
            assert stats["blocks_stored"] == 2, stats
            assert stats["write_failures"] >= 1, stats
            # A failed write pauses writing: the blocks behind it are dropped, not each tried.
            assert stats["writes_dropped"] >= 1, stats
            log = srv.log_text()
            assert "No space left on device" in log
            assert log.count("cannot write KV block") == stats["write_failures"]
            for i in (1, 2):  # evict document 0 from RAM
                assert generate(srv, document(i))["text"] == expected[i]
            again = generate(srv, document(0))
            assert again["text"] == expected[0]
            after = hicache(srv)
            assert after["disk_hit_tokens"] >= 64, after
            assert after["load_failures"] == 0, after
        finally:
            assert srv.stop() == 0, srv.log_tail()


def test_corrupt_blocks_are_recomputed_with_a_warning(store_dir, expected):
    files = sorted(store_dir.glob("*.kvb"))
    assert files
    for n, path in enumerate(files):
        data = bytearray(path.read_bytes())
        if n % 2 == 0:
            data[len(data) // 2] ^= 0xFF
            path.write_bytes(bytes(data))
        else:
            path.write_bytes(bytes(data[: len(data) - 10]))
    srv = Server(extra_args=tier_args(store_dir, "write_through"))
    try:
        out = generate(srv, document(0))
        assert out["text"] == expected[0]
        stats = hicache(srv)
        assert stats["load_failures"] >= 1
        assert stats["disk_hit_tokens"] == 0
        assert "unusable" in srv.log_tail(200)
        # The directory removed while serving: writes skip or make it again, outputs stay.
        shutil.rmtree(store_dir)
        assert generate(srv, document(1))["text"] == expected[1]
        assert generate(srv, document(0))["text"] == expected[0]
    finally:
        assert srv.stop() == 0, srv.log_tail()


def test_clear_storage_backend_deletes_the_blocks(store_dir, reference):
    r = reference.post("/clear_hicache_storage_backend")
    assert r.status_code == 400, r.text
    assert "not enabled" in r.text
    srv = Server(extra_args=tier_args(store_dir))
    try:
        assert hicache(srv)["disk_tokens"] > 0
        assert any(store_dir.glob("*.kvb"))
        r = srv.post("/clear_hicache_storage_backend")
        assert r.status_code == 200, r.text
        assert r.json()["success"] is True
        assert r.json()["blocks_deleted"] > 0
        assert hicache(srv)["disk_tokens"] == 0
        assert not any(store_dir.glob("*.kvb"))
        # SGLang's other spellings; nothing left to delete.
        assert srv.get("/clear_hicache_storage_backend").json()["blocks_deleted"] == 0
        assert srv.post("/hicache/storage-backend/clear").json()["blocks_deleted"] == 0
    finally:
        assert srv.stop() == 0, srv.log_tail()


@pytest.mark.parametrize("args, message", [
    (["--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake",
      "--hicache-storage-dir", "x"], "not supported"),
    (["--enable-hierarchical-cache", "--hicache-storage-backend", "file"],
     "--hicache-storage-dir"),
    (["--hicache-storage-backend", "file"], "--enable-hierarchical-cache"),
    (["--enable-hierarchical-cache", "--hicache-storage-backend", "file",
      "--hicache-storage-dir", "x", "--hicache-write-policy", "sometimes"], "write_through"),
])
def test_bad_flags_are_refused_at_startup(args, message):
    r = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "1", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert message in r.stdout + r.stderr


def test_an_image_span_comes_back_from_the_disk_tier(tmp_path):
    # The tier stores blocks of the token prefix, an image's content-derived ids included: after
    # /flush_cache the same image prompt is read back from disk through the image (its span lies
    # in the first blocks) and gives the same greedy output.
    import base64  # noqa: PLC0415

    from synth_mmproj import write_mmproj  # noqa: PLC0415
    from test_images import png  # noqa: PLC0415
    write_mmproj(str(tmp_path / "mmproj.gguf"), 640, seed=1)
    srv = Server(extra_args=tier_args(tmp_path / "store", policy="write_through") +
                 ["--mmproj", str(tmp_path / "mmproj.gguf")])
    try:
        body = {"text": "Describe <__media__> in detail. " + "The quick brown fox jumps. " * 30,
                "image_data": [base64.b64encode(png(40, 30, 1)).decode()],
                "sampling_params": {"temperature": 0, "max_new_tokens": 8, "ignore_eos": True}}
        first = srv.post("/generate", body, timeout=600)
        assert first.status_code == 200, first.text
        deadline = time.time() + 60
        while hicache(srv)["disk_tokens"] < 64:  # write-through: stored as the KV enters the tree
            assert time.time() < deadline, hicache(srv)
            time.sleep(0.2)
        assert srv.post("/flush_cache").status_code == 200
        again = srv.post("/generate", body, timeout=600)
        assert again.status_code == 200, again.text
        # The image's 16 positions start within the first few tokens: a hit of 64 or more
        # covers it.
        assert again.json()["meta_info"]["cached_tokens"] >= 64
        assert hicache(srv)["disk_hit_tokens"] >= 64
        assert again.json()["text"] == first.json()["text"]
    finally:
        assert srv.stop() == 0, srv.log_tail()
