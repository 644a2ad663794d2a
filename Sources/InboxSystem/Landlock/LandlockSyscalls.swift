import CShims
import Glibc

func sys_landlock_abi() -> CInt {
    inbox_landlock_create_ruleset(nil, 0, INBOX_LANDLOCK_CREATE_RULESET_VERSION)
}

func sys_landlock_create_ruleset(_ attr: inout inbox_landlock_ruleset_attr, _ size: Int) -> CInt {
    inbox_landlock_create_ruleset(&attr, size, 0)
}

func sys_landlock_add_path_rule(_ ruleset: CInt, _ attr: inout inbox_landlock_path_beneath_attr) -> CInt {
    inbox_landlock_add_path_rule(ruleset, &attr)
}

func sys_landlock_restrict_self(_ ruleset: CInt) -> CInt {
    inbox_landlock_restrict_self(ruleset)
}
