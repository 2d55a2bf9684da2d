import BobaoCore
import BobaoServer
import BobaoTestSupport

extension ServerProcess {
    /// Sends `payload` on a new connection, ends the sending side, and returns every reply line.
    func exchange(_ payload: String) throws -> [String] {
        let client = try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: port))
        try client.send(payload)
        client.finishSending()
        var replies: [String] = []
        while let line = client.readLine() { replies.append(line) }
        return replies
    }
}
