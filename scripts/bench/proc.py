"""CPU time and memory of processes, from /proc."""
import os

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User plus system CPU seconds of `pid` and of its exited, waited-for children."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime + cutime + cstime) / TICKS


def tree(pid):
    """`pid` and all its descendants."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except OSError:
                pass
    result, stack = [], [pid]
    while stack:
        p = stack.pop()
        result.append(p)
        stack.extend(children.get(p, []))
    return result


def tree_cpu_seconds(pid):
    total = 0.0
    for p in tree(pid):
        try:
            total += cpu_seconds(p)
        except OSError:
            pass
    return total


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def tree_rss_mib(pid):
    total = 0.0
    for p in tree(pid):
        try:
            rss = rss_mib(p)
        except OSError:
            continue
        if rss == rss:  # zombies have no VmRSS line
            total += rss
    return total


def open_descriptors(pid):
    return len(os.listdir("/proc/%d/fd" % pid))
