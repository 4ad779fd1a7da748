/// stemdeck's version: the VERSION file at the top of the source tree, with the git commit after
/// a "+" when built from a checkout that is not at the tag (`0.1.0+g78c1ea9`). Written into
/// `generatedVersion` by scripts/version, which the StemdeckVersion build plugin runs before every
/// build; `--version`, the .deb and the man pages' check all read it from there.
public enum StemdeckVersion {
  /// `0.1.0`, `0.1.0+g78c1ea9` or `0.1.0+g78c1ea9.dirty`.
  public static var string: String { generatedVersion }

  /// The release the build is of, without what git adds (`0.1.0`).
  public static var release: String {
    String(generatedVersion.prefix { $0 != "+" })
  }
}
