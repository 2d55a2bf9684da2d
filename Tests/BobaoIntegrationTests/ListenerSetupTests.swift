import BobaoCore
import BobaoPlatform
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

/// The listener's own set-up and tear-down, in process: descriptors have one owner, and the listener
/// changes nothing process-wide.
@Suite(.serialized)
struct ListenerSetupTests {
    func makeListener(port: UInt16) throws -> LineListener {
        try LineListener(
            address: ListenAddress(host: "127.0.0.1", port: port),
            ledger: PeerLedger(rateLimiter: RateLimiter(perSecond: 0, burst: 1)),
            submit: { _, _, reply in reply(.accepted(number: 1, duplicate: false, watching: false)) })
    }

    @Test func setUpThatFailsHalfWayLeaksNoDescriptor() throws {
        let holder = try makeListener(port: 0)
        let port = try #require(UInt16(holder.boundAddress.split(separator: ":").last!))
        // Other suites run alongside and open descriptors of their own, so compare against what a leak
        // would be: at least one descriptor per failed attempt.
        let before = ProcessStatistics.openDescriptors(of: getpid())
        for _ in 0..<200 {
            #expect(throws: SystemError.self) { try makeListener(port: port) }  // address in use
        }
        let grown = ProcessStatistics.openDescriptors(of: getpid()) - before
        #expect(grown < 50, "\(grown) more descriptors after 200 failed set-ups")
        _ = holder
    }

    @Test func aStoppedListenerClosesEverythingItOpened() throws {
        let before = ProcessStatistics.openDescriptors(of: getpid())
        let soft = Posix.descriptorLimit().soft
        for _ in 0..<10 {
            let listener = try makeListener(port: 0)
            listener.start()
            let port = try #require(UInt16(listener.boundAddress.split(separator: ":").last!))
            let clients = try (0..<20).map { _ in try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: port)) }
            try clients[0].send("好\n")
            #expect(clients[0].readLine() == "OK 1")
            listener.stop()
            for client in clients { #expect(client.readLine() == nil) }
        }
        // Ten listeners with twenty clients each: a leak would be hundreds (other suites add a few).
        let grown = ProcessStatistics.openDescriptors(of: getpid()) - before
        #expect(grown < 50, "\(grown) more descriptors after ten listeners came and went")
        #expect(Posix.descriptorLimit().soft == soft, "the listener leaves the process's limits alone")
    }
}
