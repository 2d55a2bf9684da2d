"""Load test against a running `bobao serve` (started by scripts/bench-load.sh with --no-spool and a queue
large enough to count, on a private PulseAudio). Loopback only; every loop is bounded."""
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import proc  # noqa: E402

PORT = int(os.environ["BOBAO_PORT"])
PID = int(os.environ["BOBAO_PID"])
ADDRESS = ("127.0.0.1", PORT)


def state(label):
    print("  %-34s RSS %6.1f MiB   open descriptors %5d" % (label, proc.rss_mib(PID), proc.open_descriptors(PID)))


def read_replies(sock, count, timeout=60):
    """Replies until `count` lines or the end of the stream (blank lines get no reply)."""
    sock.settimeout(timeout)
    data = b""
    while data.count(b"\n") < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").splitlines()


def send_all_and_finish(sock, payload):
    sock.sendall(payload)
    sock.shutdown(socket.SHUT_WR)


def many_clients(clients=100, lines=100):
    results = {"ok": 0, "refused": 0, "lost": 0}
    lock = threading.Lock()

    def client(index):
        sock = socket.create_connection(ADDRESS)
        payload = "".join("%d号%d\n" % (index, n) for n in range(lines)).encode()
        send_all_and_finish(sock, payload)
        replies = read_replies(sock, lines)
        sock.close()
        with lock:
            results["ok"] += sum(1 for r in replies if r.startswith("OK "))
            results["refused"] += sum(1 for r in replies if r.startswith("ERR "))
            results["lost"] += lines - len(replies)

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, time.monotonic() - started


def idle_connections(count=2000):
    socks, refused = [], 0
    for _ in range(count):
        s = socket.create_connection(ADDRESS)
        socks.append(s)
    time.sleep(0.5)
    for s in socks:
        s.setblocking(False)
        try:
            data = s.recv(200)
            if data.startswith(b"ERR busy"):
                refused += 1
        except BlockingIOError:
            pass
    probe = socket.create_connection(ADDRESS)
    for s in socks:
        s.close()
    time.sleep(0.3)
    probe.close()
    after = socket.create_connection(ADDRESS)
    after.sendall("好\n".encode())
    answered = read_replies(after, 1)
    after.close()
    return refused, answered


def slow_loris(seconds=3):
    sock = socket.create_connection(ADDRESS)
    text = "慢慢来的一行\n".encode()
    for byte in text:
        sock.send(bytes([byte]))
        time.sleep(seconds / len(text))
    replies = read_replies(sock, 1)
    sock.close()
    return replies


def garbage(lines=2000):
    random.seed(11)
    sock = socket.create_connection(ADDRESS)
    payload = b"".join(bytes(random.getrandbits(8) for _ in range(random.randint(1, 80))).replace(b"\n", b"") + b"\n"
                       for _ in range(lines))
    send_all_and_finish(sock, payload)
    replies = read_replies(sock, lines)
    sock.close()
    return replies


def huge_line(size=10 * 1024 * 1024):
    sock = socket.create_connection(ADDRESS)
    send_all_and_finish(sock, b"x" * size + "\n好\n".encode())
    replies = read_replies(sock, 2)
    sock.close()
    return replies


def main():
    print("Bobao load test (loopback, --no-spool, rate limit off, queue large enough to count)")
    state("at start")
    results, seconds = many_clients()
    print("  100 connections x 100 lines:       accepted %d, refused %d, lost %d, all acknowledged in %.2f s"
          % (results["ok"], results["refused"], results["lost"], seconds))
    state("after 10,000 lines")
    refused, answered = idle_connections()
    print("  2,000 idle connections:            %d refused with ERR busy; afterwards a new client got %s"
          % (refused, answered))
    state("after 2,000 connections")
    print("  slow-loris line (3 s, byte by byte): %s" % slow_loris())
    replies = garbage()
    errors = {}
    for reply in replies:
        code = reply.split()[1] if reply.startswith("ERR ") else reply.split()[0]
        errors[code] = errors.get(code, 0) + 1
    print("  2,000 lines of random bytes:       replies %s (blank ones get none)" % dict(sorted(errors.items())))
    print("  a 10 MiB line, then a good one:    %s" % huge_line())
    time.sleep(1)
    state("at the end")


if __name__ == "__main__":
    main()
