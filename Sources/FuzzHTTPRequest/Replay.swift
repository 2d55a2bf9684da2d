import BobaoFuzzDriver

@main
struct Replay {
    static func main() throws {
        try runFuzzTarget { data, size in fuzzHTTPRequest(data!, size) }
    }
}
