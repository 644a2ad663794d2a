import CSystemd

// The call behind delivery ids: 128 random bits (sd_id128_randomize(3)), as the journal makes its ids.

func sys_sd_id128_randomize() -> (UInt64, UInt64) {
    var id = sd_id128_t()
    _ = sd_id128_randomize(&id)
    return (id.qwords.0, id.qwords.1)
}
