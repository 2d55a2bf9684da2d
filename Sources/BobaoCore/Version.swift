/// Bobao's version, as `status` and `bobao --version` report it.
public enum BobaoVersion {
    public static let current = "0.12.0"
}
