/// The HTTP side of `--token`, and what keeps a web page in someone's browser from using a Bobao it can reach.
public enum HTTPAccess {
    /// The token an `Authorization` header presents: `Bearer TOKEN`, or Basic credentials whose password is
    /// the token (any user name), for devices that can only fire a URL such as `http://bobao:TOKEN@host/…`.
    public static func presentedToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.trimmingWhitespace().split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let credentials = String(parts[1]).trimmingWhitespace()
        switch parts[0].lowercased() {
        case "bearer":
            return credentials
        case "basic":
            guard let decoded = Base64.decode(credentials), let text = String(validating: decoded, as: UTF8.self),
                  let colon = text.firstIndex(of: ":") else { return nil }
            return String(text[text.index(after: colon)...])
        default:
            return nil
        }
    }

    /// Why a browser's request from another site is refused, or nil. Browsers mark requests a page makes to
    /// another origin (`Sec-Fetch-Site: cross-site`/`same-site`, an `Origin` that is not this server's): a
    /// page on the internet could otherwise make the shop's speaker talk through the shop's own browser.
    /// Programs (curl, POS software, Home Assistant) send neither header.
    public static func crossSiteProblem(secFetchSite: String?, origin: String?, host: String?) -> LineProtocol.Refusal? {
        if let site = secFetchSite?.lowercased(), site == "cross-site" || site == "same-site" {
            return LineProtocol.Refusal(code: "cross-site", reason: "a web page of another site may not use this server")
        }
        if let origin {
            // http or https (behind a TLS proxy), the same host and port.
            let expected = host.map { $0.lowercased() }
            let lowered = origin.lowercased()
            let stripped = lowered.hasPrefix("http://") ? String(lowered.dropFirst(7))
                : lowered.hasPrefix("https://") ? String(lowered.dropFirst(8)) : nil
            guard let stripped, stripped == expected else {
                return LineProtocol.Refusal(
                    code: "cross-site", reason: "a web page of another origin (\(JSONText.quote(origin))) may not use this server")
            }
        }
        return nil
    }

    /// Without a token, only requests addressed to a name no one on the internet controls are answered: a
    /// numeric address, `localhost`, an mDNS `.local` name, a name of one label (`counter`), or one of
    /// `ownNames` (this machine's). A web page whose own public name an attacker points at the server's
    /// address (DNS rebinding) sends that name as `Host`, and is refused; the token lifts the rule.
    /// `isAddress` tells a numeric IPv4 or IPv6 address.
    public static func hostProblem(_ host: String?, ownNames: [String] = [], isAddress: (String) -> Bool) -> LineProtocol.Refusal? {
        guard let host else { return nil }  // HTTP/1.0 without Host: no browser sends that
        var name = hostName(host).lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") || name.hasSuffix(".local") || isAddress(name)
            || (!name.isEmpty && !name.contains(".")) || ownNames.contains(where: { $0.lowercased() == name }) {
            return nil
        }
        return LineProtocol.Refusal(
            code: "bad-host",
            reason: "this server answers requests addressed to its IP address, localhost or a .local name, not "
                + "\(JSONText.quote(host)) (set --token to serve other names)")
    }

    /// `example:8080` → `example`, `[::1]:8080` → `::1`.
    static func hostName(_ host: String) -> String {
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") {
            return String(host[host.index(after: host.startIndex)..<end])
        }
        if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon { return String(host[..<colon]) }
        return host
    }
}

/// RFC 4648 base64, for Basic credentials.
public enum Base64 {
    public static func decode(_ text: String) -> [UInt8]? {
        var bits: UInt32 = 0, count = 0
        var out: [UInt8] = []
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            bits = bits << 6 | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8((bits >> UInt32(count)) & 0xFF))
            }
        }
        return out
    }
}
