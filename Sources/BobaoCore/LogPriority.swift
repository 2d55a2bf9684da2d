/// A log message's priority, written as sd-daemon(3) does (`SD_WARNING "…"`): a message that starts with
/// `<3>` is an error, `<4>` a warning, `<5>` a notice; one without a prefix is information. `EventLog`
/// passes the prefix to journald, or drops it on a terminal.
public enum LogPriority {
    public static let error = "<3>"
    public static let warning = "<4>"
    public static let notice = "<5>"
    public static let info = "<6>"
}
