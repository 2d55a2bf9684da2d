import CPulse

// Cutting an utterance on purpose: an urgent announcement makes way for itself.
extension KeepAlivePlayer {
    /// Cuts the utterance now, from any thread, while the speaker's thread may be waiting inside `write` or
    /// `waitUntilPlayed`: the stream is flushed (what was queued for it is dropped and the sink rewinds, so
    /// the sound stops within milliseconds), the silence resumes at once, `write`, `endUtterance` and
    /// `waitUntilPlayed` give up on it (the waiting ones are woken), and the next utterance starts without
    /// the `--gap`. Does nothing for an utterance already played out or an earlier one.
    public func cut(_ utterance: Utterance) {
        withLoopLock {
            guard utterance.serial == serial, !utterancePlayed, !currentCut else { return }
            currentCut = true
            skipNextGap = true
            trimming = false
            cancelPlayedOutTimer()
            cancelTimingUpdate()
            defer {
                armIdleClose()
                armIdleBuffer()
                signal()
            }
            // An utterance whose stream was lost is already cut: there is nothing queued to drop.
            guard utterance.session == generation, let stream, streamReady else { return }
            mode = .silence
            if let operation = pa_stream_flush(stream, nil, nil) { pa_operation_unref(operation) }
            // Keep the sink fed until the server asks for more (the write callback answers in silence).
            writeSilence(stream, bytes: configuration.bytes(milliseconds: Self.silenceAfterCutMilliseconds))
        }
    }

    /// Silence written right behind the flush of a cut, so the stream never runs dry while the server's
    /// request for more is on its way.
    static let silenceAfterCutMilliseconds = 100

    /// Cancels the timing query of an ending utterance, whose answer would otherwise mark it played.
    /// Main loop lock held.
    func cancelTimingUpdate() {
        guard let timingUpdate else { return }
        pa_operation_cancel(timingUpdate)
        pa_operation_unref(timingUpdate)
        self.timingUpdate = nil
    }
}
