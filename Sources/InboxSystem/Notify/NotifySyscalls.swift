import CSystemd

// The sd_notify(3) call behind ServiceNotifier.

func sys_sd_notify(_ unsetEnvironment: CInt, _ state: String) -> CInt { sd_notify(unsetEnvironment, state) }
