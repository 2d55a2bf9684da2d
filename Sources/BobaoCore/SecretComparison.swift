/// Compares a presented secret with the expected one in time that does not depend on where they differ.
public enum SecretComparison {
    /// Whether `presented` is exactly `expected`. Every byte of the longer one is visited; a length
    /// difference is kept in full (never folded into a byte, where 256 extra bytes would wrap to zero).
    public static func matches(_ presented: String, _ expected: String) -> Bool {
        let given = Array(presented.utf8), wanted = Array(expected.utf8)
        var difference: UInt8 = 0
        for index in 0..<max(given.count, wanted.count) {
            let a = index < wanted.count ? wanted[index] : 0
            let b = index < given.count ? given[index] : 0
            difference |= a ^ b
        }
        return difference == 0 && given.count == wanted.count
    }
}
