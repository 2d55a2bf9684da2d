import CPulse

// The heartbeat: a timer on the main loop itself (not on the sound server's context, which is dropped and made
// anew at every reconnection), so it runs on the audio thread from `start` to `stop`, while no sound server is
// there as well, and stops whenever that thread is stuck: systemd's watchdog, which hangs on it, then restarts
// the service. Main loop lock held throughout.
extension KeepAlivePlayer {
    /// Arms the first heartbeat, if the player has one and an interval for it.
    func startHeartbeat() {
        guard heartbeat != nil, configuration.heartbeatMilliseconds != nil, heartbeatTimer == nil else { return }
        let api = pa_threaded_mainloop_get_api(mainloop)!
        var when = nextHeartbeat
        heartbeatTimer = api.pointee.time_new(api, &when, onHeartbeat, userdata)
        if heartbeatTimer == nil { log("could not start the heartbeat timer: the watchdog will not be pinged") }
    }

    func stopHeartbeat() {
        guard let heartbeatTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(heartbeatTimer)
        self.heartbeatTimer = nil
    }

    /// One interval from now. The main loop takes a wall-clock time and turns it into its own monotonic time
    /// when the timer is armed, so a jump of the wall clock moves no heartbeat.
    private var nextHeartbeat: timeval {
        var when = timeval()
        let interval = pa_usec_t(max(1, configuration.heartbeatMilliseconds ?? 1)) * 1000
        pa_timeval_add(pa_gettimeofday(&when), interval)
        return when
    }

    /// The timer fired: beat, and arm it again an interval from now (a late heartbeat is never made up for).
    func heartbeatDidFire() {
        guard let heartbeatTimer, !stopping else { return }
        heartbeat?()
        var when = nextHeartbeat
        pa_threaded_mainloop_get_api(mainloop).pointee.time_restart(heartbeatTimer, &when)
    }
}

let onHeartbeat: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    player(userdata).heartbeatDidFire()
}
