/// The board's side of the activity feed (`AnnouncementActivity`): the board tells it of every announcement
/// accepted (once queued: with a spool, once stored), started, waiting, interrupted, put back and ended, from
/// outside its lock and before the message's watchers; the speaker tells it of the first samples written.
extension AnnouncementBoard {
    /// Sets the feed told of announcements from now on (set it before anything is submitted or spoken), and
    /// tells it, as an observer, when the queue or what speaks changes (its `status` events).
    public func setActivity(_ activity: AnnouncementActivity) {
        state.withLock { $0.activity = activity }
        addObserver { [weak activity] in activity?.statusMayHaveChanged() }
    }

    /// The feed set by `setActivity`, if any.
    public var activity: AnnouncementActivity? {
        state.withLock { $0.activity }
    }
}
