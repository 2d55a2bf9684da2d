import CPulse

// Bobao's own stream volume (`bobao volume 70`): set on the open stream at once, and given to every stream
// the player opens afterwards, so a reconnection keeps it.
extension KeepAlivePlayer {
    /// Sets the stream's volume to `percent` (clamped to 0–100) of the server's normal volume. Any thread.
    public func setVolume(percent: Int) {
        withLoopLock {
            volumePercent = min(max(percent, 0), 100)
            guard streamReady, let context, let stream else { return }
            var volume = streamVolume
            let index = pa_stream_get_index(stream)
            if let operation = pa_context_set_sink_input_volume(context, index, &volume, nil, nil) {
                pa_operation_unref(operation)
            }
        }
    }

    /// The volume to open a stream with, or to set on it. Main loop lock held.
    var streamVolume: pa_cvolume {
        var volume = pa_cvolume()
        let level = pa_volume_t(UInt64(PA_VOLUME_NORM) * UInt64(volumePercent ?? 100) / 100)
        pa_cvolume_set(&volume, 1, level)
        return volume
    }
}
