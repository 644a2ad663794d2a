# The checks of the container tier, sourced by scripts/container-tests once the container
# is up; each is a function that prints what it saw when it fails, and returns non-zero.
# They run in order in one container: the package is installed once, and each check
# starts from what the one before left (the agent running, unless it says otherwise).
# shellcheck shell=bash
# shellcheck disable=SC2154 # share, max_exposure_tenths, ... come from scripts/container-tests
# shellcheck disable=SC2016 # $... in single quotes is for the container's sh or dpkg-query

spool=/var/spool/inboxd/Inbox
failed_id=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c55
loaded_id=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5a

# send USER FILE [INBOX]: an ordinary user copies FILE (made by scripts/container-tests in
# /srv/inboxd-tests/files) to their home and sends it with inboxctl, as the README says: to
# the shared drop Inbox, or to INBOX.
send() {
    local user=$1 file=$2 inbox=${3:-$spool}
    as "$user" sh -c 'cd && cp "/srv/inboxd-tests/files/$1" . && inboxctl send --inbox "$2" --source-app com.example.mail "$1"' \
        sh "$file" "$inbox"
}

# journalctl applies --after-cursor wrongly together with field matches (systemd 252 skips
# the first matching entry when the cursor's own entry does not match), so the matching
# is done here: entries CURSOR [JOURNALCTL-ARGS] [-- FIELD=VALUE...] prints, in export
# format, the entries since CURSOR that have every FIELD=VALUE.
entries() {
    local after=$1 args=()
    shift
    while (($# > 0)) && [[ $1 != -- ]]; do
        args+=("$1")
        shift
    done
    (($# == 0)) || shift
    inside journalctl --quiet --after-cursor="$after" "${args[@]}" --output=export |
        awk -v want="$(printf '%s\n' "$@")" '
            BEGIN { RS = ""; FS = "\n"; n = split(want, fields, "\n") }
            {
                for (i = 1; i <= n; i++) {
                    if (fields[i] == "") continue
                    found = 0
                    for (j = 1; j <= NF; j++) if ($j == fields[i]) { found = 1; break }
                    if (!found) next
                }
                print $0 "\n"
            }'
}
# entry CURSOR FIELD=VALUE...: the agent logged such an entry since CURSOR (the unit is matched
# here too, not with --unit, which is a match of its own: see entries).
entry() {
    local after=$1
    shift
    [[ -n $(entries "$after" -- _SYSTEMD_UNIT=inboxd.service "$@") ]]
}
restarted_since() { (($(prop NRestarts) > $1)); }
# last_loaded CURSOR: the last registrations-loaded entry since CURSOR, as FIELD=VALUE lines.
last_loaded() {
    entries "$1" -- _SYSTEMD_UNIT=inboxd.service MESSAGE_ID="$loaded_id" |
        awk 'BEGIN { RS = "" } { entry = $0 } END { print entry }'
}
# loaded CURSOR IDENTIFIER...: the last load since CURSOR has every IDENTIFIER.
loaded() {
    local handlers identifier
    handlers=" $(last_loaded "$1" | sed -n 's/^INBOX_HANDLERS=//p') "
    shift
    for identifier in "$@"; do
        [[ $handlers == *" $identifier "* ]] || return 1
    done
}

check_install() {
    # What an older package left: the spool a directory of its own, a file waiting in it.
    inside sh -c 'install -d -m 0755 /var/spool/inboxd && install -d -m 1733 /var/spool/inboxd/Inbox &&
        printf "left by an older package\n" >/var/spool/inboxd/Inbox/waiting.dat &&
        stat -c %i /var/spool/inboxd/Inbox/waiting.dat >/root/waiting.inode' || return 1
    inside dpkg --install /srv/inboxd-tests/inboxd.deb >/dev/null || return 1
    wait_for 60 "inboxd.service active (running) with the agent's STATUS=" running || {
        inside systemctl status --no-pager --lines=20 inboxd.service
        return 1
    }
    local enabled status
    enabled=$(inside systemctl is-enabled inboxd.service || true)
    [[ $enabled == enabled ]] || {
        echo "    systemctl is-enabled: $enabled"
        return 1
    }
    status=$(inside systemctl status --no-pager --lines=0 inboxd.service)
    if ! grep -q 'Active: active (running)' <<<"$status" || ! grep -q 'Status: "Watching 1 inbox' <<<"$status"; then
        printf '%s\n' "$status"
        return 1
    fi
    grep -E 'Active:|Status:' <<<"$status" | sed 's/^ */    /'
}

# What the unit's sandbox did to the running agent, read from the kernel: no_new_privs,
# a seccomp filter, a read-only /usr and /etc in its mount namespace, the bounding set;
# and the agent's own word that it sandboxes handlers with Landlock (which needs the
# unit's SystemCallFilter= to let landlock_* through).
check_agent_sandbox() {
    local pid proc mounts landlock ok=0
    pid=$(prop MainPID)
    proc=$(inside cat "/proc/$pid/status")
    grep -qx $'NoNewPrivs:\t1' <<<"$proc" || {
        echo "    NoNewPrivs is not 1"
        ok=1
    }
    grep -qx $'Seccomp:\t2' <<<"$proc" || {
        echo "    no seccomp filter (Seccomp: $(sed -n 's/^Seccomp:\t//p' <<<"$proc"))"
        ok=1
    }
    mounts=$(inside findmnt --task "$pid" --list --noheadings --output TARGET,OPTIONS)
    local target
    for target in /usr /etc /boot /var/lib/inboxd; do
        local options
        options=$(awk -v t="$target" '$1 == t { o = $2 } END { print o }' <<<"$mounts")
        [[ -n $options ]] || options=$(awk '$1 == "/" { o = $2 } END { print o }' <<<"$mounts")
        case $target in
            /var/lib/inboxd) want=rw ;;
            *) want=ro ;;
        esac
        if [[ ,$options, != *,"$want",* ]]; then
            echo "    $target is not $want for the agent (options $options)"
            ok=1
        fi
    done
    # The spool is no mount of its own: /var/spool/inboxd leads into /var/lib/inboxd, and
    # nothing is mounted beneath either (rename(2) cannot cross a mount).
    local inner
    inner=$(awk '$1 ~ "^/var/spool/inboxd" || $1 ~ "^/var/lib/inboxd/" { print $1 }' <<<"$mounts" | paste -sd' ')
    if [[ -n $inner ]]; then
        echo "    mounts of their own in the agent's namespace: $inner"
        ok=1
    fi
    landlock=$(inside journalctl --quiet --no-pager --unit=inboxd.service --output=cat \
        --grep='Handlers are sandboxed with Landlock ABI' | tail -n 1)
    if [[ -n $landlock ]]; then
        echo "    $landlock"
    else
        echo "    the agent did not say that it sandboxes handlers with Landlock"
        ok=1
    fi
    [[ $(prop StatusText) != *"no Landlock"* ]] || {
        echo "    STATUS= says no Landlock"
        ok=1
    }
    return "$ok"
}

check_security() {
    local out score tenths
    out=$(inside systemd-analyze security --no-pager inboxd.service)
    score=$(sed -n 's/.*Overall exposure level for inboxd.service: \([0-9.]*\).*/\1/p' <<<"$out")
    [[ -n $score ]] || {
        printf '%s\n' "$out" | tail -n 5
        return 1
    }
    tenths=${score/./}
    tenths=$((10#$tenths))
    echo "    exposure $score (at most $((max_exposure_tenths / 10)).$((max_exposure_tenths % 10))); what is left:"
    # The lines that still count against the unit (✗), without the header and the total.
    grep '✗' <<<"$out" | sed 's/^/    /' | cut -c1-110
    ((tenths <= max_exposure_tenths))
}

# Registrations for the checks: two of the packaged examples, linked into /etc as the
# package's docs say, and the test handlers of Tests/Container.
check_registrations() {
    local examples
    inside install -d -m 0755 /usr/local/libexec/inboxd-tests
    local program
    for program in probe slow failing photos rtfd; do
        inside install -m 0755 "/srv/inboxd-tests/bin/$program" /usr/local/libexec/inboxd-tests/ || return 1
    done
    examples=$(inside dpkg --listfiles inboxd | grep -E '/examples/handlers\.d/[^/]+\.(handler|plist)$') || {
        echo "    the package ships no example registrations"
        return 1
    }
    local after
    after=$(cursor)
    # In one command, as an administrator would (README, Installation): handlers.d is
    # watched, and the agent loads them by itself.
    # shellcheck disable=SC2086 # one path a word
    inside sh -c 'ln -sf "$@" /etc/inboxd/handlers.d/ && cp /srv/inboxd-tests/handlers.d/*.handler /etc/inboxd/handlers.d/' \
        sh $examples || return 1
    wait_for 30 "the agent to load the new registrations" loaded "$after" com.example.image-viewer \
        com.example.profile-viewer com.example.profile-editor test.inboxd.probe test.inboxd.slow \
        test.inboxd.failing test.inboxd.rtfd || {
        last_loaded "$after" | grep -E '^(MESSAGE|INBOX_HANDLERS|INBOX_REJECTED)='
        unit_log "$after" --output=cat
        # Seen once: the agent removes and adds its handlers.d watch on every reload, and
        # events still queued under the old watch are dropped.
        echo "    (a change made while the agent was reloading is not noticed until the next one)"
        return 1
    }
    last_loaded "$after" | grep -E '^(MESSAGE|INBOX_HANDLERS|INBOX_REJECTED)=' | sed 's/^/    /'
    ! grep -q '^INBOX_REJECTED=' <<<"$(last_loaded "$after")"
}

check_user_drop() {
    local after uid
    after=$(cursor)
    inside useradd --create-home sender
    uid=$(inside id -u sender)
    send sender rgb.png >/dev/null || return 1
    wait_for 30 "the image viewer's line" logged "$after" \
        'rgb.png: public.png from com.example.mail, 73 bytes, 3x2' || return 1
    wait_for 30 "the finished entry" entry "$after" INBOX_EVENT=finished \
        INBOX_HANDLER=com.example.image-viewer INBOX_SOURCE_UID="$uid" || return 1
    unit_log "$after" --output=cat --grep='rgb.png' | sed 's/^/    /'
    # The profile viewer keeps its copy in Documents: a write the sandbox allows.
    send sender alice.customprofile >/dev/null || return 1
    wait_for 30 "the profile kept in Documents" inside test -f \
        /var/lib/inboxd/containers/com.example.profile-viewer/Documents/alice.customprofile || return 1
    [[ -z $(inside find "$spool" -mindepth 1) ]] || {
        echo "    left in the drop Inbox: $(inside find "$spool" -mindepth 1)"
        return 1
    }
}

# An ordinary user with no agent of their own: inboxctl finds the system instance by itself
# (send without --inbox), tells the sender what became of their own file (list --mine,
# status FILE), and refuses up front an override the system agent would refuse.
sender_sees() { as sender inboxctl list --mine --json | grep -q "\"name\":\"$1\",\"state\":\"$2\""; }
check_sender_view() {
    local out
    as sender sh -c 'cd && cp /srv/inboxd-tests/files/rgb.png view.png && inboxctl send view.png' >/dev/null || {
        echo "    inboxctl send without --inbox failed"
        return 1
    }
    wait_for 30 "view.png done in list --mine" sender_sees view.png done || {
        as sender inboxctl list --mine 2>&1 | sed 's/^/    /'
        return 1
    }
    out=$(as sender inboxctl status view.png 2>&1)
    [[ $out == "view.png: done"* && $out == *"Handler:       com.example.image-viewer"* ]] || {
        echo "    inboxctl status view.png:"
        echo "$out" | sed 's/^/    /'
        return 1
    }
    [[ $(as sender stat -c %a /run/inboxd/senders 2>&1) == 711 ]] || { echo "    /run/inboxd/senders is not 0711"; return 1; }
    if out=$(as sender sh -c 'cd && inboxctl open --with com.example.profile-viewer --force view.png' 2>&1) ||
        [[ $out != *"takes --force only from root or its own user"* ]]; then
        echo "    open --force by an ordinary user was not refused up front:"
        echo "$out" | sed 's/^/    /'
        return 1
    fi
}

# A root handler under the unit: ProtectSystem=strict makes /usr and /etc read-only, and
# Landlock, applied by the agent, keeps it from the spool and state that the agent itself
# may write; its Documents are its own.
check_handler_sandbox() {
    local after out ok=0
    after=$(cursor)
    send sender check.probe >/dev/null || return 1
    wait_for 30 "the probe's report" logged "$after" 'probe uid:' || return 1
    out=$(unit_log "$after" --output=cat --grep='^probe ')
    printf '%s\n' "$out" | sed 's/^/    /'
    local want
    while IFS= read -r want; do
        grep -qxF "$want" <<<"$out" || {
            echo "    expected: $want"
            ok=1
        }
    done <<'EXPECTED'
probe etc: denied (Read-only file system)
probe usr: denied (Read-only file system)
probe spool: denied (Permission denied)
probe state: denied (Permission denied)
probe documents: written
probe inbox-copy: denied (Permission denied)
probe read: allowed
probe uid: 0
EXPECTED
    return "$ok"
}

# A package document as the README says: an RTFD an ordinary user copies under a hidden name
# into the shared Inbox and renames in whole reaches its handler (root, under the unit and
# Landlock) as one directory, with INBOX_PACKAGE=1; the handler may read it and copy it into
# its Documents, but not write, create or rename anything inside it; after exit 0 nothing of
# it is left in the container or the spool.
package_gone() { [[ -z $(inside find /var/lib/inboxd/containers/test.inboxd.rtfd/Inbox -mindepth 1) ]]; }
check_package_delivery() {
    local after out ok=0 want
    after=$(cursor)
    as sender sh -c 'cd && rm -rf Report.rtfd && mkdir Report.rtfd &&
        printf "%s\n" "{\\rtf1\\ansi A report with a picture}" >Report.rtfd/TXT.rtf &&
        cp /srv/inboxd-tests/files/rgb.png Report.rtfd/image.png &&
        cp -r Report.rtfd "$1/.Report.rtfd" && mv "$1/.Report.rtfd" "$1/Report.rtfd"' sh "$spool" || return 1
    wait_for 30 "the package handler's report" logged "$after" 'rtfd keep:' || {
        unit_log "$after" --output=cat | tail -n 20 | sed 's/^/    /'
        return 1
    }
    wait_for 30 "the finished entry" entry "$after" INBOX_EVENT=finished INBOX_HANDLER=test.inboxd.rtfd || return 1
    out=$(unit_log "$after" --output=cat --grep='^rtfd ')
    printf '%s\n' "$out" | sed 's/^/    /'
    while IFS= read -r want; do
        grep -qxF "$want" <<<"$out" || {
            echo "    expected: $want"
            ok=1
        }
    done <<'EXPECTED'
rtfd package: 1 Report.rtfd com.apple.rtfd
rtfd entries: ./TXT.rtf ./image.png
rtfd read: allowed
rtfd write: denied (Permission denied)
rtfd create: denied (Permission denied)
rtfd rename: denied (Permission denied)
rtfd keep: done
EXPECTED
    inside test -f /var/lib/inboxd/containers/test.inboxd.rtfd/Documents/Report.rtfd/TXT.rtf || {
        echo "    no copy in the handler's Documents"
        ok=1
    }
    wait_for 30 "the package removed from its container Inbox" package_gone || ok=1
    [[ -z $(inside find "$spool" -mindepth 1) ]] || {
        echo "    left in the drop Inbox: $(inside find "$spool" -mindepth 1 | paste -sd' ')"
        ok=1
    }
    return "$ok"
}

check_reload() {
    local pid restarts after
    pid=$(prop MainPID)
    restarts=$(prop NRestarts)
    after=$(cursor)
    inside systemctl reload inboxd.service || return 1
    # systemd 252 does not wait for READY=1 after a reload of a Type=notify unit: wait for
    # the agent's own entry and its STATUS= instead.
    wait_for 30 "the reload's registrations-loaded entry" entry "$after" MESSAGE_ID="$loaded_id" || return 1
    wait_for 30 "active (running) with STATUS=" running || return 1
    [[ $(prop MainPID) == "$pid" && $(prop NRestarts) == "$restarts" ]] || {
        echo "    the agent was restarted instead of reloaded (pid $pid -> $(prop MainPID))"
        return 1
    }
    unit_log "$after" --output=cat | sed 's/^/    /'
}

check_restart_after_kill() {
    local pid restarts after
    pid=$(prop MainPID)
    restarts=$(prop NRestarts)
    after=$(cursor)
    inside systemctl kill --kill-who=main --signal=SIGKILL inboxd.service || return 1
    wait_for 60 "a restart after SIGKILL" restarted_since "$restarts" || return 1
    wait_for 60 "active (running) again" running || return 1
    [[ $(prop MainPID) != "$pid" ]] || return 1
    logged "$after" 'Main process exited, code=killed, status=9/KILL' || {
        unit_log "$after" --output=cat
        return 1
    }
    unit_log "$after" --output=cat --grep='Main process exited|Scheduled restart|Started' | sed 's/^/    /'
}

check_watchdog() {
    local pid restarts after
    pid=$(prop MainPID)
    restarts=$(prop NRestarts)
    after=$(cursor)
    # A stalled agent: stopped, it sends no WATCHDOG=1 (WatchdogSec=30s in the unit).
    inside kill -STOP "$pid"
    wait_for 120 "the watchdog to restart the agent" restarted_since "$restarts" || return 1
    wait_for 60 "active (running) again" running || return 1
    logged "$after" 'Watchdog timeout' || {
        unit_log "$after" --output=cat
        return 1
    }
    unit_log "$after" --output=cat --grep='Watchdog|Scheduled restart' | sed 's/^/    /'
}

# systemctl stop while a handler runs: the agent stops intake, lets it finish, and exits;
# the delivery is finished, not cut short.
check_stop_drains() {
    local after status
    after=$(cursor)
    send sender work.slow >/dev/null || return 1
    wait_for 30 "the slow handler to start" logged "$after" 'slow: started on work.slow' || return 1
    inside systemctl stop inboxd.service || return 1
    status=$(prop ActiveState)/$(prop Result)
    [[ $status == inactive/success ]] || {
        echo "    after stop: $status"
        return 1
    }
    logged "$after" 'slow: finished work.slow' || {
        unit_log "$after" --output=cat
        return 1
    }
    entry "$after" INBOX_EVENT=finished INBOX_HANDLER=test.inboxd.slow INBOX_EXIT_STATUS=0 || {
        echo "    no finished entry for the slow handler"
        return 1
    }
    unit_log "$after" --output=cat | grep -Ev '^probe ' | sed 's/^/    /'
    inside systemctl start inboxd.service || return 1
    wait_for 60 "active (running) after the start" running
}

check_failure_catalog() {
    local after explained
    # One attempt, so the failure is final at once (an administrator's change to the
    # conffile, then a restart).
    inside sh -c 'printf "\n[Agent]\nMaxAttempts=1\n" >>/etc/inboxd/inboxd.conf' || return 1
    inside systemctl restart inboxd.service || return 1
    wait_for 60 "active (running) after the restart" running || return 1
    after=$(cursor)
    send sender broken.fail >/dev/null || return 1
    wait_for 30 "the failed entry" entry "$after" MESSAGE_ID="$failed_id" || return 1
    # Without --after-cursor (see entries): this file name is failed once in this container.
    explained=$(inside journalctl --quiet --no-pager --catalog --unit=inboxd.service MESSAGE_ID="$failed_id" \
        INBOX_HANDLER=test.inboxd.failing)
    printf '%s\n' "$explained" | sed 's/^/    /'
    # The catalog's lines follow the entry, each behind "░░ " (systemd 252; "-- " before).
    grep -Eq '^(░░|--) Subject: test\.inboxd\.failing failed to handle [^ ]*broken\.fail$' <<<"$explained" &&
        grep -Eq '^(░░|--) Defined-By: inboxd$' <<<"$explained" &&
        grep -q 'the delivery will not be retried any more' <<<"$explained" || return 1
    [[ $(inside ls /var/lib/inboxd/failed/) == *broken.fail* ]] || {
        echo "    broken.fail is not in /var/lib/inboxd/failed/"
        return 1
    }
}

# The user unit, in the user manager that logind starts for a lingering user.
user_running() { [[ $(user_prop SubState) == running && $(user_prop StatusText) == Watching* ]]; }
user_log() { # user_log UID CURSOR: MESSAGE= of what the user's agent and its handlers logged
    entries "$2" -- _SYSTEMD_USER_UNIT=inboxd.service _UID="$1" | sed -n 's/^MESSAGE=//p'
}
user_handled() { [[ $(user_log "$1" "$2") == *'rgb.png: public.png from com.example.mail, 73 bytes, 3x2'* ]]; }
check_user_instance() {
    local status=0
    user_instance || status=$?
    # Whatever happened: removing the package must not find a user's agent running.
    as lingerer systemctl --user stop inboxd.service || status=1
    return "$status"
}
user_instance() {
    local uid after inbox
    inside useradd --create-home lingerer
    uid=$(inside id -u lingerer)
    inside loginctl enable-linger lingerer || return 1
    wait_for 60 "user@$uid.service" inside systemctl is-active "user@$uid.service" || return 1
    # The user's own registrations: the example image viewer, linked as the admin did.
    as lingerer sh -c 'mkdir -p ~/.config/inboxd/handlers.d &&
        ln -s /usr/lib/inboxd/examples/handlers.d/com.example.image-viewer.handler ~/.config/inboxd/handlers.d/' ||
        return 1
    as lingerer systemctl --user start inboxd.service || {
        as lingerer systemctl --user status --no-pager inboxd.service
        return 1
    }
    wait_for 60 "the user's agent active (running) with STATUS=" user_running || {
        as lingerer systemctl --user status --no-pager inboxd.service
        return 1
    }
    as lingerer systemctl --user status --no-pager --lines=0 inboxd.service | grep -E 'Active:|Status:' |
        sed 's/^ */    /'
    inbox=$(as lingerer sh -c 'echo "${XDG_DATA_HOME:-$HOME/.local/share}/inboxd/Inbox"')
    after=$(cursor)
    send lingerer rgb.png "$inbox" >/dev/null || return 1
    wait_for 30 "the user's handler" user_handled "$uid" "$after" || {
        user_log "$uid" "$after"
        return 1
    }
    user_log "$uid" "$after" | grep rgb.png | sed 's/^/    /'
    [[ -z $(inside find "$inbox" -mindepth 1) ]] || {
        echo "    left in the user's Inbox: $(inside find "$inbox" -mindepth 1)"
        return 1
    }
}

check_remove() {
    local out ok=0 state
    out=$(inside dpkg --remove inboxd 2>&1) || {
        printf '%s\n' "$out"
        return 1
    }
    printf '%s\n' "$out" | grep '^inboxd:' | sed 's/^/    /'
    # It says what it keeps and that a purge deletes it, with the handlers' Documents/.
    grep -q "^inboxd: kept /var/lib/inboxd .*'apt-get purge inboxd' deletes it" <<<"$out" &&
        grep -q '^inboxd: .* kept by com.example.profile-viewer in /var/lib/inboxd/containers/com.example.profile-viewer/Documents' <<<"$out" || {
        echo "    dpkg --remove did not say what it keeps and what a purge deletes"
        ok=1
    }
    if grep -q 'warning' <<<"$out"; then
        echo "    dpkg --remove warned: $(grep warning <<<"$out")"
        ok=1
    fi
    # The links to the examples lead nowhere now: taken out, made again by a reinstall.
    if [[ -n $(inside find /etc/inboxd/handlers.d -xtype l) ]]; then
        echo "    dangling links in /etc/inboxd/handlers.d: $(inside find /etc/inboxd/handlers.d -xtype l | paste -sd' ')"
        ok=1
    fi
    state=$(inside dpkg-query --show --showformat='${db:Status-Status}' inboxd)
    [[ $state == config-files ]] || {
        echo "    dpkg status after remove: $state"
        ok=1
    }
    [[ $(inside systemctl is-active inboxd.service || true) != active ]] || {
        echo "    inboxd.service is still active"
        ok=1
    }
    if inside pgrep --exact inboxd >/dev/null; then
        echo "    an inboxd process is still running"
        ok=1
    fi
    local path
    for path in /usr/sbin/inboxd /usr/bin/inboxctl /usr/lib/systemd/system/inboxd.service; do
        ! inside test -e "$path" || {
            echo "    $path is still there"
            ok=1
        }
    done
    # Kept until purge: the configuration and the state (queued and failed files).
    for path in /etc/inboxd/inboxd.conf /var/lib/inboxd/failed; do
        inside test -e "$path" || {
            echo "    $path is gone after remove"
            ok=1
        }
    done
    return "$ok"
}

check_purge() {
    local conffiles ok=0 path
    conffiles=$(inside dpkg-query --show --showformat='${Conffiles}\n' inboxd | awk 'NF { print $1 }')
    local out
    out=$(inside dpkg --purge inboxd 2>&1) || {
        printf '%s\n' "$out"
        return 1
    }
    printf '%s\n' "$out" | grep -E '^(inboxd|dpkg):' | sed 's/^/    /'
    # Before it deletes them: what, how many, and what the handlers chose to keep.
    grep -q '^inboxd: purge: deleting /var/lib/inboxd' <<<"$out" &&
        grep -q '^inboxd: .* kept by com.example.profile-viewer in ' <<<"$out" || {
        echo "    dpkg --purge did not say what it deletes"
        ok=1
    }
    # dpkg warns only of the administrator's own registrations, which it must not remove.
    if grep 'warning' <<<"$out" | grep -qv "directory '/etc/inboxd/handlers.d' not empty"; then
        echo "    dpkg --purge warned: $(grep warning <<<"$out")"
        ok=1
    fi
    if [[ -n $(inside find /etc/inboxd -xtype l 2>/dev/null) ]]; then
        echo "    dangling links left: $(inside find /etc/inboxd -xtype l | paste -sd' ')"
        ok=1
    fi
    local state
    state=$(inside dpkg-query --show --showformat='${db:Status-Status}' inboxd 2>/dev/null || true)
    [[ -z $state || $state == not-installed ]] || {
        echo "    dpkg still knows inboxd after purge"
        ok=1
    }
    for path in $conffiles /var/lib/inboxd /var/spool/inboxd /run/inboxd \
        /etc/systemd/system/multi-user.target.wants/inboxd.service; do
        ! inside test -e "$path" -o -L "$path" || {
            echo "    $path is still there after purge"
            ok=1
        }
    done
    # dpkg never removes what it does not own: the registrations the administrator added
    # to /etc/inboxd/handlers.d stay, and so does that directory.
    local left
    left=$(inside ls /etc/inboxd/handlers.d 2>/dev/null | paste -sd' ')
    [[ $left == *test.inboxd.probe.handler* ]] || {
        echo "    the administrator's registrations are gone: '$left'"
        ok=1
    }
    # The group stays, as Debian keeps system users and groups: files elsewhere may be its.
    inside getent group inboxd >/dev/null || {
        echo "    the inboxd group is gone"
        ok=1
    }
    echo "    removed: $(paste -sd' ' <<<"$conffiles") /var/lib/inboxd /var/spool/inboxd;" \
        "kept: the inboxd group, /etc/inboxd/handlers.d ($left)"
    return "$ok"
}

# systemctl restart with an idle resident instance (the packaged Swift example, linked by
# check_registrations, for public.json): the agent ends the instance itself before it exits
# (end of file on its socket; it exits), so systemd finds nothing of the unit to kill.
instance_started_id=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c61
check_restart_resident_idle() {
    local after pid restarted
    after=$(cursor)
    as sender sh -c 'cd && printf "{\"idle\": true}\n" >idle.json &&
        inboxctl send --inbox /var/spool/inboxd/Inbox --source-app com.example.mail idle.json' >/dev/null || return 1
    wait_for 30 "the resident example to answer for idle.json" entry "$after" INBOX_EVENT=finished \
        INBOX_HANDLER=com.example.checksum || {
        unit_log "$after" --output=cat
        return 1
    }
    # The last instance started (without --after-cursor: with a match, systemd 252 skips the
    # first entry after the cursor, which this one is).
    pid=$(inside journalctl --quiet --output=export MESSAGE_ID="$instance_started_id" \
        INBOX_HANDLER=com.example.checksum | sed -n 's/^INBOX_PID=//p' | tail -n 1)
    [[ -n $pid ]] && inside kill -0 "$pid" || {
        echo "    no running instance of com.example.checksum (pid '${pid}')"
        return 1
    }
    restarted=$(cursor)
    # The checks before started the unit five times within StartLimitIntervalSec=60s; the
    # start rate limit would refuse this restart's start (start-limit-hit), not its stop.
    inside systemctl reset-failed inboxd.service || true
    inside systemctl restart inboxd.service || return 1
    wait_for 60 "active (running) after the restart" running || return 1
    if inside kill -0 "$pid" 2>/dev/null; then
        echo "    the instance (pid $pid) outlived the agent's restart"
        return 1
    fi
    if unit_log "$restarted" --output=cat | grep -E 'Killing process|left-over process|SIGKILL'; then
        echo "    systemd had to kill what the agent left (above)"
        return 1
    fi
    logged "$restarted" "Stopped com.example.checksum (pid $pid): the agent is stopping; it exited with status 0" || {
        unit_log "$restarted" --output=cat
        return 1
    }
    unit_log "$restarted" --output=cat --grep='Stopp|Started|instance' | sed 's/^/    /'
}

# A systemd unit as the handler (Unit=NAME@.service): each delivery is an instance of a
# template unit that PID 1 starts, with the delivery in an EnvironmentFile= and on stdin;
# systemctl status and journalctl -u show its run, and the agent's outcome entry names it
# (INBOX_UNIT=). Exit 75 is retried, another status ends in failed/, and the unit's user
# may read and remove its Inbox copy but not write it.
unit_template='[Unit]
Description=inboxd test handler for delivery %i

[Service]
EnvironmentFile=/run/inboxd/units/%i.env
StandardInput=file:/run/inboxd/units/%i.json
# What the unit prints carries its delivery, as the output of a launched handler does.
LogExtraFields=INBOX_DELIVERY_ID=%i INBOX_HANDLER=test.inboxd.unit
ExecStart=/usr/local/libexec/inboxd-tests/unit-handler
User=nobody
ProtectSystem=strict
# The container is read-only under ProtectSystem=strict: its Inbox must be writable for
# the unit to remove its copy (permissions still refuse it a write), Documents and tmp to
# keep files.
ReadWritePaths=/var/lib/inboxd/containers/test.inboxd.unit/Inbox
ReadWritePaths=/var/lib/inboxd/containers/test.inboxd.unit/Documents /var/lib/inboxd/containers/test.inboxd.unit/tmp
PrivateNetwork=yes
'
# unit_drop NAME: root drops NAME into the spool (hidden, then renamed into place).
unit_drop() { inside sh -c 'printf "%s\n" "$1" >"$2/.$1" && mv "$2/.$1" "$2/$1"' sh "$1" "$spool"; }
# unit_entry CURSOR FIELD=VALUE...: the agent logged such an entry for test.inboxd.unit
# since CURSOR. The unit is matched here, not with journalctl --unit (a match: see entries).
unit_entry() { [[ -n $(entries "$1" -- _SYSTEMD_UNIT=inboxd.service INBOX_HANDLER=test.inboxd.unit "${@:2}") ]]; }
# unit_of CURSOR EVENT: INBOX_UNIT= of the agent's EVENT entry for test.inboxd.unit.
unit_of() {
    entries "$1" -- _SYSTEMD_UNIT=inboxd.service INBOX_EVENT="$2" INBOX_HANDLER=test.inboxd.unit |
        sed -n 's/^INBOX_UNIT=//p' | tail -n 1
}
check_unit_handler() {
    local after unit out want ok=0
    inside install -m 0755 /srv/inboxd-tests/bin/unit-handler /usr/local/libexec/inboxd-tests/ || return 1
    inside sh -c 'printf "%s" "$1" >/etc/systemd/system/inboxd-test-unit@.service && systemctl daemon-reload' \
        sh "$unit_template" || return 1
    after=$(cursor)
    unit_drop job.unitjob || return 1
    wait_for 30 "the unit's finished entry" unit_entry "$after" INBOX_EVENT=finished || {
        unit_log "$after" --output=cat
        return 1
    }
    unit=$(unit_of "$after" finished)
    [[ $unit =~ ^inboxd-test-unit@[0-9a-f]{32}\.service$ ]] || {
        echo "    INBOX_UNIT=$unit"
        return 1
    }
    out=$(inside journalctl --quiet --no-pager --unit="$unit" --output=cat)
    printf '%s\n' "$out" | sed 's/^/    /'
    while IFS= read -r want; do
        grep -qxF "$want" <<<"$out" || {
            echo "    expected from journalctl -u $unit: $want"
            ok=1
        }
    done <<EXPECTED
unit-handler: job.unitjob attempt 1 of ${unit:17:32} as nobody
unit-handler: read: allowed
unit-handler: write: denied
unit-handler: stdin: the delivery's JSON
unit-handler: remove: allowed
EXPECTED
    # inboxctl log --delivery tells the whole story: the agent's entries and the unit's own words.
    out=$(inside inboxctl log --delivery "${unit:17:32}" -- --no-pager 2>&1 || true)
    grep -q 'unit-handler: read: allowed' <<<"$out" && grep -q 'handled job.unitjob' <<<"$out" || {
        echo "    inboxctl log --delivery ${unit:17:32} lacks the unit's line or the agent's outcome:"
        printf '%s\n' "$out" | sed 's/^/      /'
        ok=1
    }
    # What systemctl says of the run: the instance by name, its program and its exit.
    out=$(inside systemctl status --no-pager --lines=0 "$unit" 2>&1 || true)
    printf '%s\n' "$out" | sed 's/^/    /'
    grep -q "inboxd test handler for delivery ${unit:17:32}" <<<"$out" || ok=1
    # The delivery's files in the runtime directory went with it.
    [[ -z $(inside find /run/inboxd/units -mindepth 1) ]] || {
        echo "    left in /run/inboxd/units: $(inside find /run/inboxd/units -mindepth 1)"
        ok=1
    }
    after=$(cursor)
    unit_drop again.unitretry || return 1
    wait_for 30 "the retry entry (exit 75)" unit_entry "$after" INBOX_EVENT=retry INBOX_EXIT_STATUS=75 || ok=1
    wait_for 60 "the retried run's finished entry" unit_entry "$after" INBOX_EVENT=finished INBOX_ATTEMPT=2 || ok=1
    after=$(cursor)
    unit_drop broken.unitfail || return 1
    wait_for 90 "the failed entry after three attempts" unit_entry "$after" MESSAGE_ID="$failed_id" \
        INBOX_EXIT_STATUS=3 || {
        unit_log "$after" --output=cat
        return 1
    }
    unit=$(unit_of "$after" failed)
    inside journalctl --quiet --no-pager --unit="$unit" --output=cat | sed 's/^/    /'
    [[ $(inside ls /var/lib/inboxd/failed/) == *broken.unitfail* ]] || {
        echo "    broken.unitfail is not in /var/lib/inboxd/failed/"
        ok=1
    }
    # A failed run is reset once its outcome is read: no instance is left failed in PID 1.
    out=$(inside systemctl list-units --all --plain --no-legend --state=failed 'inboxd-test-unit@*')
    [[ -z $out ]] || {
        echo "    failed instances left: $out"
        ok=1
    }
    unit_log "$after" --output=cat | sed 's/^/    /'
    return "$ok"
}

# running_unit: the instance of inboxd-test-unit@.service that is active, if one is.
running_unit() {
    inside systemctl list-units --plain --no-legend --state=active 'inboxd-test-unit@*' | awk '{ print $1 }'
}
# A stop of the agent stops the unit it started (StopUnit) within its stop bound, and the
# delivery runs again at the next start; after a crash of the agent, the restarted agent
# follows the unit that still runs to its end instead of starting it twice.
check_unit_handler_stop() {
    local after unit started elapsed state restarts count ok=0
    after=$(cursor)
    unit_drop stop.unitslow || return 1
    wait_for 30 "the slow unit to run" running_unit_is_set || return 1
    unit=$(running_unit)
    started=$(date +%s)
    inside systemctl stop inboxd.service || return 1
    elapsed=$(($(date +%s) - started))
    state=$(inside systemctl show --property=ActiveState --value "$unit")
    echo "    systemctl stop inboxd took ${elapsed} s; $unit is then $state"
    [[ $state != active && $state != deactivating ]] && ((elapsed <= 20)) || ok=1
    inside test -e /var/lib/inboxd/containers/test.inboxd.unit/Inbox/stop.unitslow || {
        echo "    stop.unitslow is not kept in its container for the next start"
        ok=1
    }
    inside systemctl start inboxd.service || return 1
    wait_for 60 "active (running) after the start" running || return 1
    wait_for 30 "stop.unitslow handled after the start" unit_entry "$after" INBOX_EVENT=finished INBOX_UNIT="$unit" ||
        ok=1

    after=$(cursor)
    unit_drop crash.unitslow || return 1
    wait_for 30 "the slow unit to run" running_unit_is_set || return 1
    unit=$(running_unit)
    restarts=$(prop NRestarts)
    inside systemctl kill --kill-who=main --signal=SIGKILL inboxd.service || return 1
    wait_for 60 "a restart after SIGKILL" restarted_since "$restarts" || return 1
    wait_for 60 "crash.unitslow handled by the restarted agent" unit_entry "$after" INBOX_EVENT=finished \
        INBOX_UNIT="$unit" || ok=1
    inside journalctl --quiet --no-pager --unit="$unit" --output=cat | sed 's/^/    /'
    count=$(inside journalctl --quiet --no-pager --unit="$unit" --output=cat | grep -c '^unit-handler: crash.unitslow attempt')
    ((count == 1)) || {
        echo "    the unit ran $count times"
        ok=1
    }
    unit_log "$after" --output=cat | sed 's/^/    /'
    return "$ok"
}
running_unit_is_set() { [[ -n $(running_unit) ]]; }

# The file an older package's spool held (check_install) is in the new spool's care: the
# postinst moved the directory, the agent took the file (no handler yet: unhandled/), by
# rename all the way, so it is the same inode; /var/spool/inboxd is the link to the spool.
check_old_spool() {
    local inode found link ok=0
    link=$(inside readlink /var/spool/inboxd || true)
    [[ $link == ../lib/inboxd/spool ]] || {
        echo "    /var/spool/inboxd is not the link to the spool (readlink: '$link')"
        ok=1
    }
    inode=$(inside cat /root/waiting.inode)
    wait_for 30 "waiting.dat in unhandled/" inside test -f /var/lib/inboxd/unhandled/waiting.dat || {
        echo "    in unhandled/: $(inside ls -A /var/lib/inboxd/unhandled | paste -sd' ')"
        echo "    in the spool: $(inside ls -A /var/lib/inboxd/spool/Inbox | paste -sd' ')"
        return 1
    }
    found=$(inside stat -c %i /var/lib/inboxd/unhandled/waiting.dat)
    echo "    waiting.dat: inode $inode in the old spool, $found in unhandled/; /var/spool/inboxd -> $link"
    [[ $found == "$inode" ]] || {
        echo "    the file was copied, not moved"
        ok=1
    }
    return "$ok"
}

# moved_by_rename USER INBOX NAME: USER makes NAME in their home, renames it into INBOX
# (mv: one rename(2) on this filesystem) and the probe handler reports its Inbox copy's
# inode (not 'name': that is the container's), which must be the one dropped.
moved_by_rename() {
    local user=$1 inbox=$2 file=$3 after inode reported
    after=$(cursor)
    inode=$(as "$user" sh -c 'cd && printf "%s\n" "$1" >"$1" && stat -c %i "$1"' sh "$file") || return 1
    as "$user" sh -c 'cd && mv "$1" "$2/"' sh "$file" "$inbox" || return 1
    wait_for 30 "the probe's inode line" logged "$after" "probe inode $file:" || return 1
    reported=$(unit_log "$after" --output=cat | sed -n "s/^probe inode $file: //p" | tail -n 1)
    echo "    $file: inode $inode dropped in $inbox, $reported in the handler's Inbox"
    [[ $reported == "$inode" ]] || {
        echo "    copied, not moved by rename: $(unit_log "$after" --output=cat | grep -i 'cop\|cross' | head -n 3)"
        return 1
    }
}

check_move_by_inode() {
    moved_by_rename sender "$spool" moved.probe
}

# A symbolic link, a hard link and a FIFO dropped in the Inbox are renamed into failed/
# unopened, each with one warning; nothing is left in the Inbox.
check_moved_aside() {
    local after ok=0 entry
    after=$(cursor)
    as sender sh -c 'cd && printf "mine\n" >hard-source && ln -s /etc/hostname "$1/link.png" &&
        ln hard-source "$1/hard.png" && mkfifo "$1/pipe.png"' sh "$spool" || return 1
    for entry in 'symbolic link:link.png:-L' 'hard link:hard.png:-f' 'FIFO:pipe.png:-p'; do
        local kind=${entry%%:*} rest=${entry#*:}
        local file=${rest%%:*} test=${rest#*:}
        if ! wait_for 30 "$file moved aside" inside test "$test" "/var/lib/inboxd/failed/rejected-$file"; then
            echo "    $kind $file: $(unit_log "$after" --output=cat | grep "$file" | head -n 2)"
            ok=1
        fi
    done
    unit_log "$after" --output=cat | grep -E 'Moved aside|Left ' | sed 's/^/    /'
    [[ -z $(inside find "$spool" -mindepth 1) ]] || {
        echo "    left in the drop Inbox: $(inside find "$spool" -mindepth 1 | paste -sd' ')"
        ok=1
    }
    return "$ok"
}

# agent_config TEXT: /etc/inboxd/inboxd.conf as installed plus TEXT, then a restart.
agent_config() {
    inside sh -c 'sed -n "/^#/p;/^$/p;/^\[/p" /etc/inboxd/inboxd.conf >/etc/inboxd/inboxd.conf.new &&
        printf "%b" "$1" >>/etc/inboxd/inboxd.conf.new && mv /etc/inboxd/inboxd.conf.new /etc/inboxd/inboxd.conf' \
        sh "$1" || return 1
    inside systemctl daemon-reload || return 1
    inside systemctl restart inboxd.service || return 1
    wait_for 60 "active (running) after the restart" running
}

# An extra drop Inbox as the README says (Inboxes elsewhere): its directory in the spool,
# a link where its senders look for it, no drop-in. The agent says nothing about mounts,
# and a file renamed in keeps its inode.
check_inbox_elsewhere() {
    local after
    inside sh -c 'install -d -m 1733 -g inboxd /var/lib/inboxd/spool/photos && mkdir -p /srv/photos &&
        ln -sfn /var/spool/inboxd/photos /srv/photos/Inbox' || return 1
    after=$(cursor)
    agent_config 'MaxAttempts=1\nInbox=/var/spool/inboxd/Inbox\nInbox=/var/spool/inboxd/photos\n' || return 1
    [[ $(prop StatusText) == "Watching 2 inboxes"* ]] || {
        echo "    STATUS=$(prop StatusText)"
        return 1
    }
    if logged "$after" 'another mount'; then
        unit_log "$after" --output=cat --grep='another mount' | sed 's/^/    /'
        return 1
    fi
    moved_by_rename sender /srv/photos/Inbox photo.probe
}

# The trap the README warns of: an Inbox given to the unit with ReadWritePaths= is a mount
# of its own. The agent says so at start-up (journal, inboxctl status); a link dropped
# there cannot be moved aside: it is left in place, shown by inboxctl status and list
# failed, and logged once, not again at the next start.
check_inbox_other_mount() {
    local after out ok=0 restarted
    inside sh -c 'install -d -m 1733 -g inboxd /srv/scanner/Inbox && mkdir -p /etc/systemd/system/inboxd.service.d &&
        printf "[Service]\nReadWritePaths=/srv/scanner/Inbox\n" >/etc/systemd/system/inboxd.service.d/scanner.conf' ||
        return 1
    after=$(cursor)
    agent_config 'MaxAttempts=1\nInbox=/var/spool/inboxd/Inbox\nInbox=/srv/scanner/Inbox\n' || return 1
    wait_for 10 "the warning about the scanner's mount" logged "$after" \
        'Inbox /srv/scanner/Inbox is on another mount than the state directory' || {
        unit_log "$after" --output=cat | head -n 20 | sed 's/^/    /'
        ok=1
    }
    unit_log "$after" --output=cat --grep='another mount' | sed 's/^/    /'
    out=$(inside inboxctl status)
    grep -q '/srv/scanner/Inbox is on another mount' <<<"$out" || {
        echo "    inboxctl status does not warn:"
        printf '%s\n' "$out" | sed 's/^/      /'
        ok=1
    }
    as sender sh -c 'ln -s /etc/hostname /srv/scanner/Inbox/scan-link.png' || return 1
    wait_for 30 "the left-in-place warning" logged "$after" 'Left symbolic link /srv/scanner/Inbox/scan-link.png in place' || {
        unit_log "$after" --output=cat | tail -n 10 | sed 's/^/    /'
        return 1
    }
    wait_for 5 "inboxctl status to count it" sh -c "$container exec $name inboxctl status | grep -q 'Left in place: *1'" || {
        inside inboxctl status | sed 's/^/      /'
        ok=1
    }
    out=$(inside inboxctl list failed)
    grep -q '/srv/scanner/Inbox/scan-link.png' <<<"$out" || {
        echo "    inboxctl list failed does not show it:"
        printf '%s\n' "$out" | sed 's/^/      /'
        ok=1
    }
    grep -A3 -i 'left in' <<<"$out" | sed 's/^/    /'
    restarted=$(cursor)
    inside systemctl restart inboxd.service || return 1
    wait_for 60 "active (running) after the restart" running || return 1
    # The restart's rescan found the link again: still counted, not logged again.
    wait_for 10 "inboxctl status to count it after the restart" \
        sh -c "$container exec $name inboxctl status | grep -q 'Left in place: *1'" || ok=1
    if logged "$restarted" 'Left symbolic link /srv/scanner/Inbox/scan-link.png'; then
        echo "    logged again after the restart"
        ok=1
    fi
    # Back to one Inbox in the spool for the checks after this one.
    inside sh -c 'rm -f /etc/systemd/system/inboxd.service.d/scanner.conf /srv/scanner/Inbox/scan-link.png' || return 1
    agent_config 'MaxAttempts=1\n' || return 1
    return "$ok"
}

# A handler that writes outside its container, as the unit's comments say: /srv/photos in
# its registration's ReadWritePaths= and in a drop-in. Without the drop-in the unit's
# read-only file system stops it, and the agent says so when it loads the registration
# (inboxctl verify --strict fails, inboxctl handlers marks it), with the drop-in's text;
# with the drop-in, nothing is said and its copy lands there.
check_handler_output_elsewhere() {
    local after out restarted registration=/etc/inboxd/handlers.d/test.inboxd.photos.handler
    inside install -d -m 0755 /srv/photos || return 1
    after=$(cursor)
    inside systemctl reload inboxd.service || return 1
    wait_for 30 "the sandbox warning at load" logged "$after" \
        'ReadWritePaths=/srv/photos is read-only where inboxd.service runs (its sandbox mounts / read-only)' || {
        unit_log "$after" --output=cat | tail -n 5 | sed 's/^/    /'
        return 1
    }
    unit_log "$after" --output=cat --grep='ReadWritePaths=/srv/photos' | sed 's/^/    at load: /'
    logged "$after" '`systemctl edit inboxd.service`, add `[Service]` and `ReadWritePaths=/srv/photos`, then `systemctl restart inboxd.service`' ||
        return 1
    entry "$after" CONFIG_FILE="$registration" CONFIG_LINE=9 PRIORITY=4 || {
        echo "    no warning at $registration:9"
        return 1
    }
    if out=$(inside inboxctl verify --strict "$registration" 2>&1); then
        echo "    inboxctl verify --strict passed without the drop-in: $out"
        return 1
    fi
    [[ $out == *"$registration:9: warning: ReadWritePaths=/srv/photos is read-only where inboxd.service runs"* ]] || {
        printf '%s\n' "$out" | sed 's/^/    inboxctl verify: /'
        return 1
    }
    echo "    inboxctl verify --strict: exit 1, warning at $registration:9"
    out=$(inside inboxctl handlers) || return 1
    [[ $out == *"test.inboxd.photos "*"(cannot write what it is granted: see sandbox)"* ]] || {
        printf '%s\n' "$out" | grep -A2 test.inboxd.photos | sed 's/^/    inboxctl handlers: /'
        return 1
    }
    printf 'shot\n' | as sender sh -c 'cd && cat >one.photo && cp one.photo two.photo' || return 1
    after=$(cursor)
    as sender sh -c 'cd && inboxctl send --inbox "$1" one.photo' sh "$spool" >/dev/null || return 1
    wait_for 30 "the photos handler's line" logged "$after" 'photos: ' || return 1
    unit_log "$after" --output=cat --grep='^photos: ' | sed 's/^/    without the drop-in: /'
    logged "$after" 'photos: cannot keep one.photo: Read-only file system' || return 1
    restarted=$(cursor)
    inside sh -c 'mkdir -p /etc/systemd/system/inboxd.service.d &&
        printf "[Service]\nReadWritePaths=/srv/photos\n" >/etc/systemd/system/inboxd.service.d/photos.conf &&
        systemctl daemon-reload && systemctl restart inboxd.service' || return 1
    wait_for 60 "active (running) after the restart" running || return 1
    after=$(cursor)
    as sender sh -c 'cd && inboxctl send --inbox "$1" two.photo' sh "$spool" >/dev/null || return 1
    wait_for 30 "two.photo in /srv/photos" inside test -f /srv/photos/two.photo || {
        unit_log "$after" --output=cat | tail -n 5 | sed 's/^/    /'
        return 1
    }
    unit_log "$after" --output=cat --grep='^photos: ' | sed 's/^/    with the drop-in: /'
    if logged "$restarted" 'ReadWritePaths=/srv/photos is'; then
        echo "    still warned of with the drop-in"
        return 1
    fi
    out=$(inside inboxctl verify --strict "$registration" 2>&1) || {
        printf '%s\n' "$out" | sed 's/^/    inboxctl verify --strict with the drop-in: /'
        return 1
    }
    inside sh -c 'rm /etc/systemd/system/inboxd.service.d/photos.conf && systemctl daemon-reload &&
        systemctl restart inboxd.service' || return 1
    wait_for 60 "active (running) after the restart" running
}

# The packaged examples as installed: linked as the README says (check_registrations),
# they name no placeholder and no script of the repository, and the Swift resident one
# handles a file (the image viewer and the profile viewer have in check_user_drop).
check_examples_installed() {
    local after left
    left=$(inside grep -l '@HANDLERS_BIN@\|scripts/' -r /usr/lib/inboxd/examples/handlers.d || true)
    [[ -z $left ]] || {
        echo "    still naming the repository's placeholder or scripts: $left"
        return 1
    }
    inside sed -n '/^# Installed in/,/^#$/p' /usr/lib/inboxd/examples/handlers.d/com.example.image-viewer.handler |
        sed 's/^/    /'
    after=$(cursor)
    as sender sh -c 'cd && printf "{\"a\": 1}\n" >sums.json && inboxctl send --inbox "$1" sums.json' sh "$spool" >/dev/null ||
        return 1
    wait_for 30 "the checksum example's line in Documents/checksums.tsv" inside grep -q sums.json \
        /var/lib/inboxd/containers/com.example.checksum/Documents/checksums.tsv || {
        unit_log "$after" --output=cat | tail -n 10 | sed 's/^/    /'
        return 1
    }
    inside grep sums.json /var/lib/inboxd/containers/com.example.checksum/Documents/checksums.tsv | sed 's/^/    /'
}

# Quick Look's built-in generators as installed: an ordinary user previews the corpus's
# report.pdf (3 pages) and photo.png (640 x 480) to PNG pages with the package's inboxctl.
# Each page is a PNG whose longest side is --size's 1024, or the picture's own when smaller
# (as the JSON says, and read from its IHDR in the container); no scratch directory is left.
check_preview() {
    local json report ok=0 path want dims width height left
    inside id -u previewer >/dev/null 2>&1 || inside useradd --create-home previewer || return 1
    json=$(as previewer sh -c 'cd && rm -rf pages && mkdir pages &&
        cp /srv/inboxd-tests/files/preview/report.pdf /srv/inboxd-tests/files/preview/photo.png . &&
        inboxctl preview --builtin --output "$HOME/pages" --json report.pdf photo.png') || {
        echo "    inboxctl preview --builtin --output --json report.pdf photo.png failed"
        printf '%s\n' "$json" | sed 's/^/    /'
        return 1
    }
    # The JSON is read on the host (the container has no JSON tool): a summary line per item,
    # then "page PATH LONGEST" per page; it fails when a count, a size or an error is wrong.
    report=$(python3 -c '
import json, sys
items = json.loads(sys.argv[1])["items"]
want = {"report.pdf": (3, 1024), "photo.png": (1, 640)}
ok = [item.get("title") for item in items] == list(want)
for item in items:
    count, longest = want.get(item.get("title"), (None, None))
    pages = item.get("pages") or []
    print("    %s: generator %s, %s pages, %d PNG files, error %s"
          % (item.get("title"), item.get("generator"), item.get("pageCount"), len(pages), item.get("error")))
    ok = ok and item.get("error") is None and item.get("pageCount") == count and len(pages) == count
    for page in pages:
        if max(page["width"], page["height"]) != longest:
            print("    %s: %dx%d in the JSON, not %d on its longest side" % (page["path"], page["width"], page["height"], longest))
            ok = False
        print("page", page["path"], longest)
sys.exit(0 if ok else 1)' "$json" 2>&1) || ok=1
    grep -v '^page ' <<<"$report"
    while read -r _ path want; do
        # IHDR: width and height, 4 bytes each, big-endian, at bytes 16-23 of a PNG.
        dims=$(inside od -An -tu1 -j16 -N8 "$path") || {
            echo "    $path is not there"
            ok=1
            continue
        }
        read -r width height < <(awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }' <<<"$dims")
        if (((width > height ? width : height) != want)); then
            echo "    $path is ${width}x$height, not $want on its longest side"
            ok=1
        fi
    done < <(grep '^page ' <<<"$report")
    left=$(inside find /tmp -maxdepth 1 -name 'inboxctl-preview-*')
    [[ -z $left ]] || {
        echo "    scratch directories left in /tmp: $(paste -sd' ' <<<"$left")"
        ok=1
    }
    return "$ok"
}

# --- Printing through the container's own CUPS ----------------------------------------
# cupsd is the container's (cups.service, which cups.socket and cups.path start at boot);
# its queues print through the Generic PDF PPD of cups-filters to a `file:` device, so what
# comes out is the PDF the filter chain made, read back with pdfinfo and pdftotext.
print_queue=inboxd-test
hot_queue=inboxd-hot
print_out=/srv/print

# printed_pages QUEUE: the page count of the PDF that QUEUE's device wrote.
printed_pages() { inside pdfinfo "$print_out/$1.pdf" 2>/dev/null | sed -n 's/^Pages: *//p'; }
# printed_says QUEUE TEXT...: the text of that PDF (pdftotext) has every TEXT; says which not.
printed_says() {
    local text want ok=0
    text=$(inside pdftotext "$print_out/$1.pdf" -) || return 1
    shift
    for want in "$@"; do
        grep -qF "$want" <<<"$text" || {
            echo "    not in the printed text: $want"
            ok=1
        }
    done
    return "$ok"
}
# empty_output QUEUE: CUPS 2.4 opens a file: device without O_CREAT or O_TRUNC, so the file
# must exist before a job and is emptied before each.
empty_output() { inside sh -c ': >"$1"' sh "$print_out/$1.pdf"; }

# FileDevice Yes in cups-files.conf (without it cupsd refuses a file: device), a restart,
# and the two queues. lpadmin -P reads the PPD itself: -m would need cups-driverd, which is
# in the `cups` package, not in cups-daemon.
check_print_setup() {
    local queue out
    inside sh -c 'grep -qx "FileDevice Yes" /etc/cups/cups-files.conf ||
        printf "FileDevice Yes\n" >>/etc/cups/cups-files.conf' || return 1
    inside systemctl restart cups.service || return 1
    wait_for 30 "cups.service active" inside systemctl is-active cups.service || {
        inside systemctl status --no-pager --lines=20 cups.service
        return 1
    }
    inside install -d -m 0755 "$print_out" || return 1
    for queue in "$print_queue" "$hot_queue"; do
        inside sh -c ': >"$1"' sh "$print_out/$queue.pdf" || return 1
        out=$(inside lpadmin -p "$queue" -E -v "file://$print_out/$queue.pdf" \
            -P /usr/share/ppd/cupsfilters/Generic-PDF_Printer-PDF.ppd 2>&1) || {
            printf '%s\n' "$out" | sed 's/^/    /'
            return 1
        }
    done
    inside systemctl status --no-pager --lines=0 cups.service | grep -E 'Active:|Status:' | sed 's/^ */    /'
    inside lpstat -p "$print_queue,$hot_queue" | sed 's/^/    /'
}

# An ordinary user prints with the package's inboxctl, to the container's cupsd through its
# socket (no CUPS_SERVER: libcups finds /run/cups/cups.sock itself): the corpus's report.pdf
# (3 pages) as it is, and a text file of 70 lines drawn as its preview is (2 pages of 50
# lines). Each job is followed to its end (exit 0: completed); then the queue's output is a
# PDF with those pages and that text.
check_print() {
    local file pages first last out status ok=0
    while IFS='|' read -r file pages first last; do
        empty_output "$print_queue" || return 1
        status=0
        out=$(as sender sh -c 'cd && cp "/srv/inboxd-tests/files/$1" . && inboxctl print --printer "$2" --json "${1##*/}"' \
            sh "$file" "$print_queue" 2>&1) || status=$?
        printf '%s\n' "$out" | sed 's/^/    /'
        if ((status != 0)); then
            echo "    inboxctl print --printer $print_queue ${file##*/}: exit $status, not 0"
            ok=1
            continue
        fi
        [[ $(printed_pages "$print_queue") == "$pages" ]] || {
            echo "    ${file##*/}: $(printed_pages "$print_queue") pages printed, not $pages"
            ok=1
        }
        printed_says "$print_queue" "$first" "$last" || ok=1
        echo "    ${file##*/}: $(printed_pages "$print_queue") pages in $print_out/$print_queue.pdf, from \"$first\" to \"$last\""
    done <<'PRINTED'
preview/report.pdf|3|Page one of the quarterly report is red.|Page three of the quarterly report is blue.
note.txt|2|A note printed through the container's own cupsd.|Line 70 of the note.
PRINTED
    return "$ok"
}

# A print hot folder: a registration with Print=QUEUE instead of Exec=, for PDFs. A PDF an
# ordinary user sends to the drop Inbox is sent by the agent (under its unit) as a job to the
# container's cupsd; the delivery is done when the job completes: the finished entry, the
# file gone from the Inbox and its container, the queue's output the PDF's three pages.
# Skipped, with inboxctl verify's words, while the installed agent does not know Print=.
print_registration='[Handler]
Identifier=test.inboxd.print
Print=inboxd-hot

[DocumentType]
ContentTypes=com.adobe.pdf
Rank=Owner
'
print_copies_gone() {
    [[ -z $(inside find "$spool" /var/lib/inboxd/containers/test.inboxd.print/Inbox -mindepth 1 2>/dev/null) ]]
}
check_print_hot_folder() {
    local verified after ok=0
    inside sh -c 'printf "%s" "$1" >/root/test.inboxd.print.handler' sh "$print_registration" || return 1
    if ! verified=$(inside inboxctl verify --strict /root/test.inboxd.print.handler 2>&1); then
        printf '%s\n' "$verified" | sed 's/^/    inboxctl verify --strict: /'
        if grep -q "unknown key 'Print'" <<<"$verified"; then
            echo "    skipped: the installed agent does not know Print= yet (nothing was installed in handlers.d)"
            return "$skip_status"
        fi
        return 1
    fi
    empty_output "$hot_queue" || return 1
    after=$(cursor)
    inside install -m 0644 /root/test.inboxd.print.handler /etc/inboxd/handlers.d/ || return 1
    wait_for 30 "the agent to load test.inboxd.print" loaded "$after" test.inboxd.print || {
        last_loaded "$after" | grep -E '^(MESSAGE|INBOX_HANDLERS|INBOX_REJECTED)=' | sed 's/^/    /'
        unit_log "$after" --output=cat | tail -n 10 | sed 's/^/    /'
        return 1
    }
    after=$(cursor)
    as sender sh -c 'cd && cp /srv/inboxd-tests/files/preview/report.pdf hot-report.pdf &&
        inboxctl send --inbox "$1" --source-app com.example.mail hot-report.pdf' sh "$spool" >/dev/null || return 1
    wait_for 90 "the finished entry of test.inboxd.print" entry "$after" INBOX_EVENT=finished \
        INBOX_HANDLER=test.inboxd.print || {
        unit_log "$after" --output=cat | tail -n 20 | sed 's/^/    /'
        inside lpstat -W all -o "$hot_queue" | sed 's/^/    lpstat: /'
        return 1
    }
    entries "$after" -- _SYSTEMD_UNIT=inboxd.service INBOX_HANDLER=test.inboxd.print |
        sed -n 's/^MESSAGE=/    journal: /p'
    inside lpstat -W completed -o "$hot_queue" | sed 's/^/    lpstat -W completed: /'
    [[ $(printed_pages "$hot_queue") == 3 ]] || {
        echo "    $(printed_pages "$hot_queue") pages printed by $hot_queue, not 3"
        ok=1
    }
    printed_says "$hot_queue" 'Page one of the quarterly report is red.' \
        'Page three of the quarterly report is blue.' || ok=1
    wait_for 10 "hot-report.pdf gone from the Inbox and the container" print_copies_gone || {
        echo "    left: $(inside find "$spool" /var/lib/inboxd/containers/test.inboxd.print/Inbox -mindepth 1 2>/dev/null | paste -sd' ')"
        ok=1
    }
    return "$ok"
}

# A cluster (docs/cluster.md): a nats-server with JetStream in the container, the installed
# agent as the ingest host of its own drop Inbox, and a second agent, started by hand on
# directories of its own, as the worker. The unit has no network until the drop-in the
# README gives a cluster host; with it, a file an ordinary user sends to the spool is
# published (the published entry, its outbox empty) and handled by the second agent's
# handler, told the ingest host's name; inboxctl status --cluster shows both hosts. The
# drop-in and [Cluster] are removed again afterwards.
cluster_registration='[Handler]
Identifier=test.inboxd.cluster
Exec=/usr/local/bin/cluster-test-handler
ReadWritePaths=/var/tmp/cluster-out

[DocumentType]
Name=Cluster test files
NamePatterns=*.ctest
Rank=Owner
'
cluster_worker_conf='[Agent]
Inbox=/var/lib/test-worker/Inbox
HandlersDirectory=/root/worker-handlers.d
StateDirectory=/var/lib/test-worker/state

[Cluster]
Servers=nats://127.0.0.1:4333
Name=ctest
Host=worker-1
'
cluster_handler='#!/bin/sh
# Records the source host and the SHA-256 of what it was given.
printf "%s %s\n" "$INBOX_SOURCE_HOST" "$(sha256sum <"$INBOX_FILE" | cut -c1-64)" >"/var/tmp/cluster-out/$INBOX_NAME"
'
# Port 4333: Debian's nats-server package starts a server of its own (nats-server.service, no
# JetStream) on 4222.
cluster_published() { entry "$1" INBOX_EVENT=published INBOX_CLUSTER=ctest; }
check_cluster() {
    local status=0
    cluster_run || status=$?
    # Whatever happened, the checks after this one find the agent as before: no worker, no server, no [Cluster].
    inside sh -c 'systemctl stop test-worker.service test-nats.service 2>/dev/null;
        if [ -f /root/inboxd.conf.saved ]; then cp /root/inboxd.conf.saved /etc/inboxd/inboxd.conf; fi
        rm -f /etc/inboxd/handlers.d/test.inboxd.cluster.handler /etc/systemd/system/inboxd.service.d/cluster.conf &&
        systemctl daemon-reload && systemctl restart inboxd.service' || return 1
    wait_for 60 "active (running) after the restart" running || return 1
    return "$status"
}
cluster_run() {
    local after out ok=0 expected
    inside sh -c 'mkdir -p /var/lib/test-nats /var/tmp/cluster-out /root/worker-handlers.d /var/lib/test-worker/Inbox &&
        chmod 1777 /var/tmp/cluster-out &&
        systemd-run --quiet --unit=test-nats nats-server -js -sd /var/lib/test-nats -a 127.0.0.1 -p 4333' || return 1
    wait_for 20 "nats-server to listen on 127.0.0.1:4333" inside bash -c 'exec 3<>/dev/tcp/127.0.0.1/4333' || return 1
    inside sh -c 'printf "%s" "$1" >/etc/inboxd/handlers.d/test.inboxd.cluster.handler &&
        cp /etc/inboxd/handlers.d/test.inboxd.cluster.handler /root/worker-handlers.d/ &&
        printf "%s" "$2" >/root/worker.conf &&
        printf "%s" "$3" >/usr/local/bin/cluster-test-handler && chmod 0755 /usr/local/bin/cluster-test-handler' \
        sh "$cluster_registration" "$cluster_worker_conf" "$cluster_handler" || return 1
    inside systemd-run --quiet --unit=test-worker /usr/sbin/inboxd --config /root/worker.conf \
        --runtime-dir /run/test-worker || return 1
    wait_for 30 "the worker's status file" inside test -f /run/test-worker/status.json || return 1
    # The ingest host: the installed agent, its spool a cluster Inbox, with the network the drop-in gives.
    inside sh -c 'cp /etc/inboxd/inboxd.conf /root/inboxd.conf.saved &&
        printf "\n[Cluster]\nServers=nats://127.0.0.1:4333\nName=ctest\nHost=gateway\nInboxes=%s\nWork=no\n" "$1" \
            >>/etc/inboxd/inboxd.conf' sh "$spool" || return 1
    out=$(inside inboxctl verify --strict /etc/inboxd/inboxd.conf 2>&1) || {
        printf '%s\n' "$out" | sed 's/^/    inboxctl verify: /'
        return 1
    }
    inside sh -c 'mkdir -p /etc/systemd/system/inboxd.service.d &&
        printf "[Service]\nPrivateNetwork=no\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\nIPAddressDeny=any\nIPAddressAllow=localhost\n" \
            >/etc/systemd/system/inboxd.service.d/cluster.conf &&
        systemctl daemon-reload && systemctl restart inboxd.service' || return 1
    wait_for 60 "active (running) after the restart" running || return 1
    after=$(cursor)
    printf 'a file for the cluster\n' | as sender sh -c 'cd && cat >report.ctest &&
        inboxctl send --inbox "$1" report.ctest' sh "$spool" >/dev/null || return 1
    expected=$(printf 'a file for the cluster\n' | sha256sum | cut -c1-64)
    wait_for 60 "the published entry" cluster_published "$after" || {
        unit_log "$after" --output=cat | tail -n 10 | sed 's/^/    /'
        return 1
    }
    entries "$after" -- _SYSTEMD_UNIT=inboxd.service INBOX_EVENT=published | sed -n 's/^MESSAGE=/    journal: /p'
    wait_for 60 "the worker's handler to record report.ctest" inside test -s /var/tmp/cluster-out/report.ctest || {
        inside journalctl --quiet --no-pager --unit=test-worker.service --lines=10 | sed 's/^/    worker: /'
        return 1
    }
    out=$(inside cat /var/tmp/cluster-out/report.ctest)
    echo "    the worker's handler: $out"
    [[ $out == "gateway $expected" ]] || { echo "    expected: gateway $expected"; ok=1; }
    [[ -z $(inside find /var/lib/inboxd/outbox -mindepth 1 2>/dev/null) ]] || { echo "    the outbox is not empty"; ok=1; }
    wait_for 20 "inboxctl status --cluster to list both hosts" \
        inside sh -c 'inboxctl status --cluster | grep -q "gateway" && inboxctl status --cluster | grep -q "worker-1"' || ok=1
    inside inboxctl status --cluster | sed 's/^/    status --cluster: /'
    return "$ok"
}

run_checks() {
    check "install: dpkg -i starts inboxd, active (running), STATUS=" check_install || return 0
    check "the unit's sandbox holds the running agent" check_agent_sandbox || true
    check "systemd-analyze security inboxd, live" check_security || true
    check "an older package's spool: moved over, its file kept, by inode" check_old_spool || true
    check "registrations: packaged examples linked, test handlers" check_registrations || return 0
    check "a file an ordinary user drops reaches the example handlers" check_user_drop || true
    check "a sender without an agent of their own sees their files (list --mine)" check_sender_view || true
    check "the installed agent moves a dropped file by rename (inode)" check_move_by_inode || true
    check "a symlink, a hard link and a FIFO are moved aside to failed/" check_moved_aside || true
    check "the examples work as installed (Swift resident checksum)" check_examples_installed || true
    check "a root handler is confined by the unit and by Landlock" check_handler_sandbox || true
    check "an RTFD renamed in whole reaches its handler, read-only inside" check_package_delivery || true
    check "systemctl reload: re-read in place, running again" check_reload || true
    check "Restart=on-failure: SIGKILL, restarted" check_restart_after_kill || true
    check "watchdog: a stopped (SIGSTOP) agent is restarted" check_watchdog || true
    check "systemctl stop drains: the running handler finishes" check_stop_drains || true
    check "Unit=: a systemd unit handles, retries and fails deliveries" check_unit_handler || true
    check "Unit=: an agent's stop and crash, and the units it started" check_unit_handler_stop || true
    check "journalctl -x explains a failed delivery (catalog)" check_failure_catalog || true
    check "an extra Inbox as documented: in the spool, moved by inode" check_inbox_elsewhere || true
    check "an Inbox on a mount of its own: warned, left entries shown once" check_inbox_other_mount || true
    check "a handler's output in /srv/photos: the documented drop-in" check_handler_output_elsewhere || true
    check "user unit: systemctl --user for a lingering user" check_user_instance || true
    check "systemctl restart: an idle resident instance ends before the agent" check_restart_resident_idle || true
    # Printing through the container's cupsd. After the checks that read a handler's lines since a
    # journal cursor: inboxctl print draws a text file with generators run as a user, as the preview
    # check does (below). The hot folder's check reads only the agent's own entries.
    if check "CUPS in the container: cups.service, file: queues (FileDevice Yes)" check_print_setup; then
        check "a print hot folder (Print=): a dropped PDF is printed, done" check_print_hot_folder || true
        check "an ordinary user prints a PDF and a text file (inboxctl print)" check_print || true
    fi
    # Last before removal: run before them, it made the two checks that read a handler's lines since
    # a journal cursor miss each handler's first line (cause not found yet; it adds a user and runs
    # generators as that user).
    check "a cluster: the installed agent publishes, a second agent handles" check_cluster || true
    check "an ordinary user previews a PDF and a PNG to PNG pages (--builtin)" check_preview || true
    check "dpkg --remove: stopped, gone, configuration and state kept" check_remove || true
    check "dpkg --purge: configuration, state and spool gone" check_purge || true
}
