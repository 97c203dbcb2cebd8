/// MediaKit's version, as the C API (`mk_version`) and the plugin host (`mk_host.version`)
/// report it.
public enum MediaKitVersion {
    /// The library version, e.g. "0.2.0".
    public static let string = "0.2.0"
}
