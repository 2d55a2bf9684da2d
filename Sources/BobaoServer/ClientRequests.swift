import BobaoAudio
import BobaoCore
import BobaoPlatform

/// What a client may ask, whatever it came by (a line, an HTTP request): submit an announcement, and carry
/// out a command. The line listener and the HTTP server call the same two closures, so both protocols accept,
/// refuse, log and answer alike.
struct ClientRequests: Sendable {
    let submit: LineListener.Submit
    let perform: LineListener.Perform

    /// - Parameter volumeChanged: after a client set the volume (the console shows it).
    init(
        board: AnnouncementBoard, output: any AudioOutput, volume: StreamVolume, startedAt: Double, log: EventLog,
        volumeChanged: @escaping @Sendable () -> Void = {}
    ) {
        submit = { submission, peer, reply in
            board.submit(submission) { outcome in
                let acceptance: AnnouncementBoard.Acceptance
                switch outcome {
                case .failure(let refusal): return reply(.refused(refusal))
                case .success(let accepted): acceptance = accepted
                }
                let number = acceptance.number, key = submission.options.clientID
                if acceptance.duplicate {
                    log("duplicate of #\(number) from \(peer) (id \(EventLog.quote(key ?? ""))): not queued again")
                } else {
                    log("accepted #\(number) from \(peer): \(EventLog.quote(submission.text))\(Speaker.describe(submission.options))")
                }
                reply(.accepted(number: number, duplicate: acceptance.duplicate, watching: submission.wait))
                guard submission.wait else { return }
                let watching = board.watch(number, clientID: key) { event in
                    reply(.event(event.line(number: number, clientID: key), final: event.isOutcome))
                }
                if !watching { reply(.unwatched) }
        }
        }
        perform = { command, peer, reply in
            switch command {
            case .status:
                // At once, even while the disk is slow: it is how one finds out.
                reply(StatusReport.line(
                    uptimeSeconds: WallClock.monotonicSeconds() - startedAt, output: output.status,
                    volume: volume.percent, board: board.snapshot))
            case .skip:
                reply(board.skip())
            case .clear:
                // After what was acknowledged before it is queued, so it clears that too.
                board.afterPendingSubmissions { reply(board.clear()) }
            case .volume(let percent?):
                volume.set(percent, by: peer) { text in
                    reply(text)
                    volumeChanged()
                }
            case .volume(nil):
                // Behind a volume set before it, which is stored first.
                board.afterPendingSubmissions { reply(volume.report()) }
            case .cancel(let target):
                board.afterPendingSubmissions {
                    switch board.cancel(target) {
                    case .success(let text): reply(text)
                    case .failure(let refusal): reply(LineProtocol.error(refusal))
                    }
                }
        }
        }
    }
}
