"""Acknowledgement throughput and latency against a running `bobao serve` (scripts/bench-acks.sh starts
it). Bulk clients send as fast as they can while a probe client sends one line every 20 ms: prints the
bulk clients' acks per second and the probe's median and worst ack latency."""
import os
import socket
import statistics
import threading
import time

ADDRESS = ("127.0.0.1", int(os.environ["BOBAO_PORT"]))
CLIENTS = int(os.environ.get("BULK_CLIENTS", "20"))
LINES = int(os.environ.get("BULK_LINES", "500"))


def bulk(index, counts, lock):
    sock = socket.create_connection(ADDRESS)
    sock.sendall("".join("%d号%d\n" % (index, n) for n in range(LINES)).encode())
    sock.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    with lock:
        counts["ok"] += data.count(b"OK ")
        counts["err"] += data.count(b"ERR ")


def probe(stop, latencies):
    sock = socket.create_connection(ADDRESS)
    reader = sock.makefile("rb")
    n = 0
    while not stop.is_set():
        started = time.monotonic()
        sock.sendall(("探%d\n" % n).encode())
        reply = reader.readline()
        latencies.append((time.monotonic() - started) * 1000)
        assert reply.startswith(b"OK "), reply
        n += 1
        time.sleep(0.02)


counts, lock = {"ok": 0, "err": 0}, threading.Lock()
stop, latencies = threading.Event(), []
prober = threading.Thread(target=probe, args=(stop, latencies))
prober.start()
time.sleep(0.2)
started = time.monotonic()
threads = [threading.Thread(target=bulk, args=(i, counts, lock)) for i in range(CLIENTS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.monotonic() - started
time.sleep(0.2)
stop.set()
prober.join()
print("  %d clients x %d lines: %d OK, %d ERR in %.2f s = %.0f acks/s; probe: %d lines, median %.1f ms, worst %.1f ms"
      % (CLIENTS, LINES, counts["ok"], counts["err"], elapsed, counts["ok"] / elapsed, len(latencies),
         statistics.median(latencies), max(latencies)))
