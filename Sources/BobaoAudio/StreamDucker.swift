import BobaoCore
import CPulse
import Glibc
import Synchronization

/// Where the ducker keeps what it lowered, so a Bobao that died without restoring can restore at its next
/// start. `save` is called before any volume is lowered and after volumes are restored (with `[]`).
public protocol DuckingStore: Sendable {
    func load() -> [DuckedStream]
    func save(_ streams: [DuckedStream])
}

/// How the ducker behaves; the defaults suit a counter speaker over background music.
public struct DuckingConfiguration: Sendable {
    /// Other streams' volume while Bobao speaks, as a factor of their own (`--duck`); 1 lowers nothing.
    public var factor = 0.3
    /// Bobao's sink when its own stream cannot be seen (nil: the server's default sink).
    public var sinkName: String?
    /// The sound server (nil: the usual lookup).
    public var serverAddress: String?
    /// The ramp: this many volume steps, this far apart (the first at once): 4 × 35 ms ≈ 105 ms.
    public var rampSteps = 4
    public var rampStepMilliseconds = 35
    /// Speech that ends keeps the others lowered this long, so back-to-back announcements stay ducked.
    public var releaseDelayMilliseconds = 200
    /// At most this many streams are lowered at once; more are left alone (and the log says so once).
    public var maximumStreams = 256
    /// Reconnection backoff, in milliseconds.
    public var reconnectInitialMilliseconds = 200
    public var reconnectMaximumMilliseconds = 5000
    /// How long `stop()` waits for the sound server to confirm the restored volumes.
    public var stopTimeoutMilliseconds = 1000

    public init() {}

    /// `30 %` for 0.3.
    public var percent: String {
        let tenths = Int((factor * 1000).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10) %" : "\(tenths / 10).\(tenths % 10) %"
    }
}

/// Lowers the other playback streams on Bobao's sink while it speaks, and puts them back after.
///
/// It has its own PulseAudio connection and threaded main loop, apart from the player's, so nothing here
/// can hold up the audio path: `speechActivity` stores a flag and writes a byte to a pipe, and the main
/// loop does the rest (fire and forget). Volumes move in a short ramp of a few steps on a timer; the release
/// waits `releaseDelayMilliseconds`, so announcements back to back stay ducked between them. A stream that
/// appears on the sink while Bobao speaks is lowered too. Bobao's own streams (application.id
/// `org.bobao.Bobao`, or this process) and streams of other sinks are never touched. A stream whose volume
/// someone else changed meanwhile is left as it is. What was lowered is saved in the store first, so a
/// crash is repaired at the next start; `stop()` restores before the process exits.
public final class StreamDucker: @unchecked Sendable {
    static let applicationID = "org.bobao.Bobao"

    let configuration: DuckingConfiguration
    let store: (any DuckingStore)?
    let log: @Sendable (String) -> Void
    let mainloop: OpaquePointer
    /// The speaker's latest word: speaking or not. Written by any thread, read by the main loop.
    private let wanted = Atomic<Bool>(false)
    /// The pipe that wakes the main loop when `wanted` changes.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    let ownProcess = String(getpid())

    // Everything below is guarded by the main loop lock; C callbacks run with it held.
    var wakeEvent: OpaquePointer?
    var context: OpaquePointer?
    var reconnectTimer: OpaquePointer?
    var reconnectDelay: Int
    var started = false
    var stopping = false
    /// The speaker's state as last applied.
    var speaking = false
    /// The connected server's identity, once its information arrived.
    var server: String?
    var defaultSink: String?
    /// Leftovers are reconciled and the sink is known: ducking may act.
    var ready = false
    /// Clients that are Bobao (any instance), and those of this very process.
    var bobaoClients: Set<UInt32> = []
    var ownClients: Set<UInt32> = []
    /// The sink Bobao's own stream plays on (`ownStream`), and the sink `sinkName` or the default names.
    var ownStream: UInt32?
    var ownSink: UInt32?
    var namedSink: UInt32?
    /// Streams lowered now (or being ramped), by sink-input index.
    var tracked: [UInt32: Tracked] = [:]
    /// Records not yet checked against a server: from the store at start, or from a lost connection.
    var leftovers: [DuckedStream] = []
    var goal = Goal.restored
    var releaseTimer: OpaquePointer?
    var rampTimer: OpaquePointer?
    /// A duck's listing of the sink inputs is under way; what it found to lower so far.
    var listing = false
    var additions: [UInt32: Tracked] = [:]
    /// The sink each of `additions` plays on: kept until the listing ends, because Bobao's own stream (which
    /// says which sink is Bobao's) may come later in it than the streams to lower.
    var additionSinks: [UInt32: UInt32] = [:]
    /// What happened to streams since the duck, for the one log line of the restore.
    var cycle = Cycle()
    /// Leftovers restored, and left alone, by the listing after a connection.
    var reconciled = (restored: 0, changed: 0)
    var warnedAboutLimit = false
    /// `stop()`'s restores not yet confirmed, and whether its wait ran out.
    var pendingStopOperations = 0
    var stopTimedOut = false

    enum Goal { case ducked, restored }

    struct Tracked {
        var record: DuckedStream
        /// The volume last set (at first: what the stream had).
        var current: [UInt32]
        /// Every volume set since it was lowered: a late report of an earlier step is still Bobao's doing.
        var history: [[UInt32]] = []
        /// The ramp's volumes still to set.
        var steps: [[UInt32]] = []
    }

    struct Cycle {
        var joined = 0, changed = 0, gone = 0, movedAway = 0
    }

    public init(
        configuration: DuckingConfiguration, store: (any DuckingStore)?, log: @escaping @Sendable (String) -> Void
    ) {
        self.configuration = configuration
        self.store = store
        self.log = log
        reconnectDelay = configuration.reconnectInitialMilliseconds
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        mainloop = pa_threaded_mainloop_new()
        pa_threaded_mainloop_set_name(mainloop, "bobao.ducking")
    }

    deinit {
        pa_threaded_mainloop_free(mainloop)
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    var api: UnsafeMutablePointer<pa_mainloop_api> { pa_threaded_mainloop_get_api(mainloop) }

    /// Reads the store, starts the main loop and connects; returns at once.
    public func start() {
        let saved = store?.load() ?? []
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard !started else { return }
        started = true
        leftovers = saved
        pa_threaded_mainloop_start(mainloop)
        if wakeRead >= 0 {
            wakeEvent = api.pointee.io_new(api, wakeRead, PA_IO_EVENT_INPUT, onWake, userdata)
        }
        connect()
    }

    /// Bobao starts (`true`) or stops (`false`) speaking. Never blocks: any thread, the speaker's included.
    public func speechActivity(_ speaking: Bool) {
        wanted.store(speaking, ordering: .sequentiallyConsistent)
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe (EAGAIN) already holds a wake-up
    }

    /// The main loop woke for `speechActivity`: apply the latest state.
    func wake() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
        let wanted = wanted.load(ordering: .sequentiallyConsistent)
        guard wanted != speaking, !stopping else { return }
        speaking = wanted
        if wanted { beginDuck() } else { armRelease() }
    }

    /// Restores every lowered stream at once (waiting up to `stopTimeoutMilliseconds` for the server to
    /// confirm), saves what could not be confirmed for the next start, and disconnects. The main thread.
    public func stop() {
        pa_threaded_mainloop_lock(mainloop)
        guard started, !stopping else { return pa_threaded_mainloop_unlock(mainloop) }
        stopping = true
        cancelTimers()
        if ready, context != nil {
            let restoring = tracked.values.filter { !DuckingLedger.same($0.current, $0.record.original) }
            for stream in restoring {
                pendingStopOperations += 1
                setVolume(stream.record.index, stream.record.original, confirm: true)
            }
            var when = timeval()
            pa_timeval_add(pa_gettimeofday(&when), pa_usec_t(configuration.stopTimeoutMilliseconds) * 1000)
            let deadline = api.pointee.time_new(api, &when, onStopDeadline, userdata)
            while pendingStopOperations > 0 && !stopTimedOut && deadline != nil { pa_threaded_mainloop_wait(mainloop) }
            if let deadline { api.pointee.time_free(deadline) }
            if pendingStopOperations == 0 {
                if !restoring.isEmpty { log("restored \(restoring.count) stream(s) on the way out") }
                tracked = [:]
            }
        }
        save()
        tearDownConnection()
        if let wakeEvent {
            api.pointee.io_free(wakeEvent)
            self.wakeEvent = nil
        }
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
    }

    func stopDeadlinePassed() {
        stopTimedOut = true
        pa_threaded_mainloop_signal(mainloop, 0)
    }

    func stopOperationAnswered() {
        pendingStopOperations -= 1
        pa_threaded_mainloop_signal(mainloop, 0)
    }

    /// Writes what is lowered now, and what is still to be checked, to the store (`[]` removes the file).
    func save() {
        store?.save(leftovers + tracked.values.map(\.record).sorted { $0.index < $1.index })
    }

    func cancelTimers() {
        for timer in [releaseTimer, rampTimer, reconnectTimer].compactMap({ $0 }) { api.pointee.time_free(timer) }
        releaseTimer = nil
        rampTimer = nil
        reconnectTimer = nil
    }

    /// A one-shot timer `milliseconds` from now on the monotonic clock.
    func timer(
        in milliseconds: Int,
        _ callback: @convention(c) (UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?) -> Void
    ) -> OpaquePointer? {
        guard let context else { return nil }
        return pa_context_rttime_new(context, pa_rtclock_now() + pa_usec_t(milliseconds) * 1000, callback, userdata)
    }
}

// MARK: C callbacks of the main loop itself.

func ducker(_ userdata: UnsafeMutableRawPointer?) -> StreamDucker {
    Unmanaged<StreamDucker>.fromOpaque(userdata!).takeUnretainedValue()
}

let onWake: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, Int32, pa_io_event_flags_t, UnsafeMutableRawPointer?
) -> Void = { _, _, _, _, userdata in
    ducker(userdata).wake()
}

let onStopDeadline: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    ducker(userdata).stopDeadlinePassed()
}
