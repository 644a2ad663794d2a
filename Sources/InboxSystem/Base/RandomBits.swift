/// Random bits from the kernel, as the journal makes its ids (sd_id128_randomize(3)): for names that must not repeat
/// (a delivery id, an object store's nuid).
public enum RandomBits {
    /// 128 random bits.
    public static func make128() -> (UInt64, UInt64) { sys_sd_id128_randomize() }
}
