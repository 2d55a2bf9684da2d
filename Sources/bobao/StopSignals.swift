import BobaoCore
import BobaoPlatform
import BobaoServer
import Glibc

/// The signals that stop `bobao serve`: SIGTERM, SIGINT and SIGHUP. The first starts a graceful stop; a
/// second one, during it, ends the process at once.
///
/// They are blocked in every thread and taken with sigwait, so no handler ever runs inside the server's
/// code. A SIGHUP that was ignored when Bobao started (under `nohup`) stays ignored.
enum StopSignals {
    /// SIGTERM, SIGINT, and SIGHUP unless it is ignored.
    static var set: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        if !isIgnored(SIGHUP) { sigaddset(&signals, SIGHUP) }
        return signals
    }

    /// Blocks until one of them arrives; returns it.
    static func wait() -> Int32 {
        var signals = set
        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
        return received
    }

    static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }

    /// From now on, a second stop signal logs and exits with status 1 at once, without waiting for the
    /// announcement being spoken. Nothing is lost that was acknowledged: each accepted announcement was
    /// committed to the spool before its `OK`, and leaves it only once spoken, in one SQLite transaction.
    static func forceExitOnSecondSignal(log: EventLog, spooled: Bool) {
        startThread(name: "bobao.signals") {
            let again = wait()
            let kept = spooled ? "what was not spoken stays in the spool" : "what was not spoken is lost (--no-spool)"
            log(LogPriority.warning + "received \(name(again)) again: stopping at once; \(kept)")
            _exit(1)
        }
    }

    private static func isIgnored(_ signal: Int32) -> Bool {
        var action = sigaction()
        guard sigaction(signal, nil, &action) == 0, let handler = action.__sigaction_handler.sa_handler else {
            return false
        }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}
