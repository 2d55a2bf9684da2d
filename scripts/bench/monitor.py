"""Records a PulseAudio sink's monitor with parec and timestamps every sample on arrival.

Used by the benchmarks to find when sound first reached the sink: the time of a sample is the
arrival time of its chunk minus the samples that followed it in that chunk.
"""
import array
import os
import subprocess
import threading
import time

RATE = 22050


class Monitor:
    def __init__(self, sink, latency_ms=5):
        self.process = subprocess.Popen(
            ["parec", "-d", sink + ".monitor", "--raw", "--format=s16le", "--rate=%d" % RATE,
             "--channels=1", "--latency-msec=%d" % latency_ms],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.samples = array.array("h")
        self.chunks = []  # (arrival time, index of the chunk's first sample, sample count)
        self.lock = threading.Condition()
        self.leftover = b""
        threading.Thread(target=self._read, daemon=True).start()
        # Ready once data flows.
        self.wait_for(lambda: len(self.samples) > RATE // 10, timeout=10)

    def _read(self):
        fd = self.process.stdout.fileno()
        while True:
            data = os.read(fd, 65536)
            now = time.monotonic()
            if not data:
                return
            data = self.leftover + data
            if len(data) % 2:
                self.leftover, data = data[-1:], data[:-1]
            else:
                self.leftover = b""
            chunk = array.array("h", data)
            with self.lock:
                self.chunks.append((now, len(self.samples), len(chunk)))
                self.samples.extend(chunk)
                self.lock.notify_all()

    def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        with self.lock:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.lock.wait(remaining):
                    return predicate()
            return True

    def first_loud_after(self, t0, threshold=500, timeout=10):
        """Seconds from t0 to the first sample of at least `threshold` that arrived after t0."""
        result = []

        def found():
            for arrival, start, count in reversed(self.chunks):
                if arrival < t0:
                    break
            for arrival, start, count in self.chunks:
                if arrival < t0:
                    continue
                for i in range(start, start + count):
                    if abs(self.samples[i]) >= threshold:
                        played = arrival - (start + count - 1 - i) / RATE
                        result.append(played - t0)
                        return True
            return False

        if not self.wait_for(found, timeout):
            return None
        return result[0]

    def wait_quiet(self, seconds=0.6, threshold=200, timeout=30):
        """Waits until the last `seconds` of the recording stayed below `threshold`."""
        window = int(seconds * RATE)

        def quiet():
            tail = self.samples[-window:]
            return len(tail) == window and max(tail) < threshold and -min(tail) < threshold

        return self.wait_for(quiet, timeout)

    def close(self):
        self.process.terminate()
        self.process.wait()
