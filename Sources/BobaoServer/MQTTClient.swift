import BobaoCore
import BobaoPlatform
import CMosquitto
import Dispatch
import Glibc
import Synchronization

/// Bobao as a client of an MQTT broker (`--mqtt`): announcements published to the node's, its groups' and
/// everyone's `say` topics are submitted like lines on the TCP port, through the same `submit`.
///
/// One named thread ("bobao-mqtt") owns the libmosquitto handle: it polls the socket itself (no `select`,
/// whose FD_SETSIZE a busy line port could pass), runs libmosquitto's callbacks, reconnects with back-off and
/// publishes availability. Other threads only ask it to stop, through a pipe. Announcement refusals and
/// broker faults are logged; none of them stops the server, and the line port never waits for the broker.
final class MQTTClient: @unchecked Sendable {
    // `handle` and everything under "loop thread state" belong to the loop thread once `start` is called
    // (before that, to the creating thread); `stopRequested` and the wake pipe are how other threads reach it.
    let settings: MQTTSettings
    let handle: OpaquePointer
    let submit: LineListener.Submit
    let rules: MessageRules
    let log: EventLog
    let refused: @Sendable (String) -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let finished = DispatchSemaphore(value: 0)

    // MARK: Loop thread state
    /// The broker accepted the connection (CONNACK 0) and it has not been lost since.
    var isConnected = false
    /// When to try connecting next; nil while an attempt is under way or the connection is up.
    var reconnectAt: Double?
    var backoffSeconds = MQTTClient.firstBackoff
    var connectionFault: RepeatedFault
    /// The broker refusing the user name or password: said once as an error, then summed up.
    var credentialFault: RepeatedFault
    /// The mid of the `offline` publish at a clean stop, and whether the broker acknowledged it.
    var offlineMid: Int32?
    var offlineAcknowledged = false
    /// Refused messages: the first ones logged one by one, then summed up (a misconfigured publisher
    /// must not flood the log).
    let refusals: Mutex<RepeatedFault>

    static let firstBackoff = 1.0
    static let maximumBackoff = 30.0
    /// How long a clean stop waits for the broker to acknowledge `offline`, in seconds.
    static let offlineTimeout = 2.0

    /// Makes the client (no network yet). - Throws: `MQTTSettings.Invalid` when libmosquitto refuses a setting.
    init(
        settings: MQTTSettings, submit: @escaping LineListener.Submit, rules: MessageRules, log: EventLog,
        refused: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        if let problem = bobao_mosquitto_load() {  // opened only now: see mosquitto_loader.c
            throw MQTTSettings.Invalid("--mqtt needs libmosquitto (Debian: apt install libmosquitto1): \(String(cString: problem))")
        }
        self.settings = settings
        self.submit = submit
        self.rules = rules
        self.log = log
        self.refused = refused
        let clock: RepeatedFault.Clock = { WallClock.monotonicSeconds() }
        connectionFault = RepeatedFault("MQTT: still not connected to \(settings.brokerDescription)", clock: clock)
        credentialFault = RepeatedFault(
            "MQTT: the broker still refuses Bobao's credentials", noun: "refused attempt", clock: clock)
        refusals = Mutex(RepeatedFault("MQTT: more messages refused", noun: "refused message", logFirst: 10, clock: clock))
        Self.initializeLibrary
        // Clean session off with a fixed id: the broker keeps the subscriptions and queues QoS 1 messages
        // published while the box is away.
        guard let handle = bobao_mosquitto_new(settings.clientID, false, nil) else {
            throw MQTTSettings.Invalid(
                "libmosquitto could not make a client for id \(settings.clientID): \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            bobao_mosquitto_destroy(handle)
            throw MQTTSettings.Invalid("no pipe for the MQTT thread: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        try configureHandle()
    }

    deinit {
        bobao_mosquitto_destroy(handle)
        close(wakeRead)
        close(wakeWrite)
    }

    /// `mosquitto_lib_init` once per process.
    private static let initializeLibrary: Void = { _ = bobao_mosquitto_lib_init() }()

    /// The Will, the user, and the callbacks (which reach `self` through libmosquitto's user data).
    private func configureHandle() throws {
        let offline = Array("offline".utf8)
        var status = bobao_mosquitto_will_set(handle, settings.availabilityTopic, Int32(offline.count), offline, 1, true)
        guard status == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTSettings.Invalid(
                "libmosquitto refused the Will on \(settings.availabilityTopic): \(Self.describe(status))")
        }
        if let user = settings.user {
            status = bobao_mosquitto_username_pw_set(handle, user, settings.password)
            guard status == MOSQ_ERR_SUCCESS.rawValue else {
                throw MQTTSettings.Invalid("libmosquitto refused the user name: \(Self.describe(status))")
            }
        }
        _ = bobao_mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)  // announcements are small and urgent
        bobao_mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        bobao_mosquitto_connect_with_flags_callback_set(handle, mqttConnected)
        bobao_mosquitto_disconnect_callback_set(handle, mqttDisconnected)
        bobao_mosquitto_message_callback_set(handle, mqttMessage)
        bobao_mosquitto_subscribe_callback_set(handle, mqttSubscribed)
        bobao_mosquitto_publish_callback_set(handle, mqttPublished)
    }

    /// Starts the loop thread, which connects (and keeps reconnecting) in the background.
    func start() {
        log("MQTT: connecting to \(settings.brokerDescription) as \(settings.clientID)"
            + (settings.user.map { " (user \($0)\(settings.password == nil ? ", no password" : ""))" } ?? "")
            + "; announcements on \(settings.sayTopics.joined(separator: ", "))")
        reconnectAt = 0
        started.store(true, ordering: .sequentiallyConsistent)
        startThread(name: "bobao-mqtt") { [self] in
            run()
            finished.signal()
        }
    }

    /// Publishes `offline` (waiting up to `offlineTimeout` for the broker to acknowledge it), disconnects
    /// cleanly, and returns once the loop thread has finished. Messages still in the broker stay there for
    /// the next start.
    func stop() {
        guard !stopRequested.exchange(true, ordering: .sequentiallyConsistent),
              started.load(ordering: .sequentiallyConsistent) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        if finished.wait(timeout: .now() + Self.offlineTimeout + 3) == .timedOut {
            log(LogPriority.warning + "MQTT: the client thread did not finish in time")
        }
    }

    var isStopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    // MARK: The loop

    private func run() {
        while !isStopping {
            let now = WallClock.monotonicSeconds()
            if let at = reconnectAt, now >= at {
                reconnectAt = nil
                connect()
            }
            let socket = bobao_mosquitto_socket(handle)
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if socket >= 0 {
                let events = Int16(POLLIN) | (bobao_mosquitto_want_write(handle) ? Int16(POLLOUT) : 0)
                fds.append(pollfd(fd: socket, events: events, revents: 0))
            }
            var timeout: Int32 = 1000  // libmosquitto's keep-alive and retries want a call every second
            if let at = reconnectAt { timeout = Int32(max(0, min(1000, (at - now) * 1000))) }
            _ = poll(&fds, nfds_t(fds.count), timeout)
            if isStopping { break }
            if socket >= 0 { serviceSocket(readable: fds[1].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0,
                                           writable: fds[1].revents & Int16(POLLOUT) != 0) }
        }
        disconnectCleanly()
    }

    /// One round of libmosquitto's I/O; a failure closes the socket (libmosquitto calls `disconnected`).
    private func serviceSocket(readable: Bool, writable: Bool) {
        var status = MOSQ_ERR_SUCCESS.rawValue
        if readable { status = bobao_mosquitto_loop_read(handle, 1) }
        if status == MOSQ_ERR_SUCCESS.rawValue, writable || bobao_mosquitto_want_write(handle) {
            status = bobao_mosquitto_loop_write(handle, 1)
        }
        if status == MOSQ_ERR_SUCCESS.rawValue { status = bobao_mosquitto_loop_misc(handle) }
        if status != MOSQ_ERR_SUCCESS.rawValue, bobao_mosquitto_socket(handle) < 0, reconnectAt == nil {
            connectionFailed(Self.describe(status))
        }
    }

    /// A first connection or a reconnection, without blocking on the TCP handshake (a host name is looked up
    /// here, which may block briefly).
    private func connect() {
        let status = bobao_mosquitto_connect_async(handle, settings.host, Int32(settings.port), Int32(settings.keepAliveSeconds))
        if status != MOSQ_ERR_SUCCESS.rawValue { connectionFailed(Self.describe(status)) }
    }

    /// Schedules the next attempt after the back-off (1 s, doubling to 30 s) and logs the fault: the first
    /// time as it is, then summed up.
    func connectionFailed(_ why: String, credentials: Bool = false) {
        isConnected = false
        if credentials {
            if let line = credentialFault.occurred(
                "MQTT: the broker at \(settings.brokerDescription) refused Bobao's credentials (\(why)); check --mqtt-user, "
                    + "BOBAO_MQTT_PASSWORD and the broker's password file; retrying with back-off")
            {
                log(LogPriority.error + line)
            }
        } else if let line = connectionFault.occurred(
            "MQTT: cannot connect to \(settings.brokerDescription) (\(why)); retrying with back-off up to "
                + "\(Int(Self.maximumBackoff)) s; the line port works meanwhile")
        {
            log(LogPriority.warning + line)
        }
        reconnectAt = WallClock.monotonicSeconds() + backoffSeconds
        backoffSeconds = min(backoffSeconds * 2, Self.maximumBackoff)
    }

    /// `offline` (retained), acknowledged or not within `offlineTimeout`, then DISCONNECT, so the broker
    /// keeps the session and does not publish the Will.
    private func disconnectCleanly() {
        guard isConnected else { return }
        var mid: Int32 = 0
        let offline = Array("offline".utf8)
        if bobao_mosquitto_publish(handle, &mid, settings.availabilityTopic, Int32(offline.count), offline, 1, true)
            == MOSQ_ERR_SUCCESS.rawValue
        {
            offlineMid = mid
            let deadline = WallClock.monotonicSeconds() + Self.offlineTimeout
            while !offlineAcknowledged, isConnected, WallClock.monotonicSeconds() < deadline {
                pump(timeoutMilliseconds: 100)
            }
        }
        _ = bobao_mosquitto_disconnect(handle)
        let deadline = WallClock.monotonicSeconds() + 1
        while bobao_mosquitto_socket(handle) >= 0, WallClock.monotonicSeconds() < deadline { pump(timeoutMilliseconds: 100) }
        log("MQTT: disconnected from \(settings.brokerDescription); \(settings.availabilityTopic) is offline")
    }

    private func pump(timeoutMilliseconds: Int32) {
        let socket = bobao_mosquitto_socket(handle)
        guard socket >= 0 else { return }
        var fd = pollfd(fd: socket, events: Int16(POLLIN) | (bobao_mosquitto_want_write(handle) ? Int16(POLLOUT) : 0), revents: 0)
        _ = poll(&fd, 1, timeoutMilliseconds)
        var status = bobao_mosquitto_loop_read(handle, 1)
        if status == MOSQ_ERR_SUCCESS.rawValue, bobao_mosquitto_socket(handle) >= 0 { status = bobao_mosquitto_loop_write(handle, 1) }
        if status != MOSQ_ERR_SUCCESS.rawValue { isConnected = false }
    }

    /// libmosquitto's words for one of its error codes (`MOSQ_ERR_ERRNO`: the system's).
    static func describe(_ status: Int32) -> String {
        if status == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: bobao_mosquitto_strerror(status))
    }
}
