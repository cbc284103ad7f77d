//! The words the book shows about the machine: the "Your machine" page's rows
//! ([`facts`]: what each fact is and why it matters), the sentences for what lies
//! underneath (the clock, the idle states, the hypervisor), the limits' cells, and a
//! result's provenance details ([`details_line`]). The facts themselves are read by
//! `machine.rs`, in the measuring core; these words are in the page layer, outside the
//! code key (`key/hash.rs`): rewording the page measures nothing.

use crate::machine::{LimitValue, Limits, Machine, Underneath, cgroup_limit, machine_line};
use crate::procfs::{read as read_trim, read_u64};
use serde::{Deserialize, Serialize};

/// One fact about the machine for the "Your machine" page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fact {
    pub name: String,
    pub value: Option<String>,
    pub why: String,
}

fn fact(name: &str, value: Option<String>, why: &str) -> Fact {
    Fact {
        name: name.into(),
        value,
        why: why.into(),
    }
}

impl LimitValue {
    /// The cell for a limits table: `20,000`, `unlimited`, `no limit set`, `not readable`.
    pub fn words(self) -> String {
        match self {
            LimitValue::Value(v) => crate::fmt::fmt_count(v),
            LimitValue::Unlimited => "unlimited".into(),
            LimitValue::NotSet => "no limit set".into(),
            LimitValue::NotReadable => "not readable".into(),
        }
    }
}

/// Everything the "Your machine" page shows, read now.
pub fn facts() -> Vec<Fact> {
    let m = Machine::current();
    let u = Underneath::current();
    let l = Limits::current();
    let num = |v: Option<u64>| v.map(crate::fmt::fmt_count);
    let bytes = |v: Option<u64>| v.map(|b| crate::fmt::fmt_bytes(b as f64));
    let governor = read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    vec![
        fact(
            "CPU",
            Some(m.cpu.clone()),
            "the processor every number on these pages ran on",
        ),
        fact(
            "logical CPUs",
            Some(m.logical_cpus.to_string()),
            "how many threads can run at once; spinning costs one each",
        ),
        fact(
            "virtual machine",
            m.virtualised
                .map(|v| if v { "yes" } else { "no" }.to_string()),
            "a hypervisor adds its own work to every wake-up that must bring a halted virtual CPU back (the halt-poll and exit rows)",
        ),
        fact("operating system", Some(m.os.clone()), ""),
        fact(
            "kernel",
            Some(m.kernel.clone()).filter(|k| !k.is_empty()),
            "",
        ),
        fact("architecture", Some(m.arch.clone()), ""),
        fact(
            "compiler",
            Some(m.rustc.clone()),
            "the rustc that built the measuring code",
        ),
        fact(
            "clock source",
            Some(u.clock_source_words()),
            "what `Instant::now()` reads underneath; `tsc` is cheapest",
        ),
        fact(
            "clock resolution (measured)",
            Some(u.clock_resolution_words()),
            "the shortest interval two back-to-back readings spanned: no shorter than the fastest reading or the clock's tick",
        ),
        fact(
            "cost of reading the clock",
            Some(u.clock_read_words()),
            "what each timestamp adds to what it times",
        ),
        fact(
            "cpuidle driver",
            Some(u.idle_driver_words()),
            "what an idle CPU does while its thread waits; a menu or teo governor picks an idle state from the expected idle time, haltpoll polls for its window and then halts",
        ),
        fact(
            "idle states (CPU 0)",
            Some(u.idle_states_words()),
            "each state's exit latency as its driver declares it; in a virtual machine a halted CPU's wake-up also goes through the host (the halt-poll and hypervisor-exit rows)",
        ),
        fact(
            "guest halt-poll window",
            Some(u.guest_halt_poll_words()),
            "on a virtual machine, an idle CPU that halts exits to the hypervisor, and its wake-up comes back through it; polling first avoids both for short waits",
        ),
        fact(
            "KVM halt_poll_ns (as a host)",
            Some(u.kvm_halt_poll_words(m.virtualised)),
            "how long a host polls for a halted guest CPU before it sleeps",
        ),
        fact(
            "preemption model",
            Some(u.preemption_words()),
            "`none` and `voluntary` let kernel code finish to a scheduling point before a woken thread runs; `full` preempts it at once",
        ),
        fact(
            "a trapped CPUID (one exit to the hypervisor, or several if nested)",
            Some(u.cpuid_words(&m.arch)),
            "a light exit's cost: a hypervisor handles CPUID without the host's scheduler, while a halt also waits for the host to stop and wake the virtual CPU, which this does not time",
        ),
        fact(
            "timer slack",
            read_u64("/proc/self/timerslack_ns").map(|ns| crate::fmt::fmt_ns(ns as f64)),
            "how late Linux may fire a sleeping thread's timer to batch wake-ups",
        ),
        fact(
            "CPU frequency governor",
            governor,
            "`powersave` may run a woken thread at a low clock until it ramps up (under `acpi-cpufreq` it keeps the lowest clock throughout)",
        ),
        fact("memory", bytes(l.memory_total), ""),
        fact(
            "open files (soft / hard)",
            match (l.open_files_soft, l.open_files_hard) {
                (None, None) => None,
                (s, h) => Some(format!(
                    "{} / {}",
                    num(s).unwrap_or_else(|| "unlimited".into()),
                    num(h).unwrap_or_else(|| "unlimited".into())
                )),
            },
            "each socket pair costs two; the experiments raise soft to hard",
        ),
        fact(
            "processes per user",
            num(l.processes_soft),
            "threads count as processes for this limit",
        ),
        fact(
            "cgroup pids.max",
            Some(cgroup_limit("pids", &["pids.max"]).words()),
            "threads this cgroup (or a parent) may have in all",
        ),
        fact(
            "cgroup memory limit",
            Some(
                match cgroup_limit("memory", &["memory.max", "memory.limit_in_bytes"]) {
                    LimitValue::Value(b) => crate::fmt::fmt_bytes(b as f64),
                    other => other.words(),
                },
            ),
            "memory this cgroup (or a parent) may use in all",
        ),
        fact(
            "vm.max_map_count",
            num(l.max_map_count),
            "memory mappings per process; a thread's stack and its guard take two (a Rust std thread four, with its signal stack and guard)",
        ),
        fact(
            "kernel.pid_max",
            num(l.pid_max),
            "one more than the largest thread or process id",
        ),
        fact(
            "kernel.threads-max",
            num(l.threads_max),
            "threads the whole system may have",
        ),
        fact(
            "default stack size (soft)",
            bytes(l.stack_size_soft),
            "the main thread's stack; Rust gives spawned threads 2 MiB unless told otherwise",
        ),
    ]
}

impl Underneath {
    fn linux(&self) -> bool {
        self.os == "linux"
    }

    /// `value`, or why there is none: another OS, or not readable here.
    fn or_why(&self, value: Option<String>) -> String {
        value.unwrap_or_else(|| {
            if self.linux() {
                "not readable here".into()
            } else {
                "not read on this OS".into()
            }
        })
    }

    /// The clock source, with the others the kernel offers.
    pub fn clock_source_words(&self) -> String {
        let c = &self.clock;
        let others: Vec<&str> = c
            .available
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .filter(|a| Some(*a) != c.source.as_deref())
            .collect();
        self.or_why(c.source.as_ref().map(|s| {
            if others.is_empty() {
                s.clone()
            } else {
                format!("{s} (also offered: {})", others.join(", "))
            }
        }))
    }

    /// The clock's resolution, as measured and as stated.
    pub fn clock_resolution_words(&self) -> String {
        let c = &self.clock;
        let step = c.step_ns.map(|s| {
            format!(
                "{} smallest step between two successive readings (of {})",
                crate::fmt::fmt_ns(s),
                crate::fmt::fmt_count(c.reads)
            )
        });
        let getres = c
            .getres_ns
            .map(|r| format!("clock_getres says {}", crate::fmt::fmt_ns(r)));
        match (step, getres) {
            (Some(a), Some(b)) => format!("{a}; {b}"),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => "not measured".into(),
        }
    }

    /// What one reading of the clock costs.
    pub fn clock_read_words(&self) -> String {
        self.clock.read_ns.map_or_else(
            || "not measured".into(),
            |r| {
                format!(
                    "{} a reading (over blocks of {} successive readings, the median of a block's time over its readings)",
                    crate::fmt::fmt_ns(r),
                    crate::machine::COST_BLOCK
                )
            },
        )
    }

    /// The cpuidle driver and governor.
    pub fn idle_driver_words(&self) -> String {
        let i = &self.idle;
        self.or_why(i.driver.as_ref().map(|d| match &i.governor {
            Some(g) => format!("{d} (governor: {g})"),
            None => d.clone(),
        }))
    }

    /// CPU 0's idle states: name, exit latency, target residency.
    pub fn idle_states_words(&self) -> String {
        if self.idle.states.is_empty() {
            return self.or_why(None);
        }
        let us = |v: Option<u64>| v.map_or_else(|| "?".into(), |v| format!("{v} µs"));
        self.idle
            .states
            .iter()
            .map(|s| {
                let off = if s.disabled == Some(true) {
                    ", disabled"
                } else {
                    ""
                };
                format!(
                    "{}: exit latency {}, target residency {}{off}",
                    s.name,
                    us(s.latency_us),
                    us(s.residency_us)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn halt_poll_param(&self, name: &str) -> Option<&str> {
        self.idle
            .guest_halt_poll
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The guest halt-poll window: how long an idle virtual CPU polls before it halts.
    pub fn guest_halt_poll_words(&self) -> String {
        if !self.linux() {
            return self.or_why(None);
        }
        let Some(ns) = self
            .halt_poll_param("guest_halt_poll_ns")
            .and_then(|v| v.parse::<f64>().ok())
        else {
            return format!(
                "none: no haltpoll governor here (the idle driver is {})",
                self.idle.driver.as_deref().unwrap_or("not readable")
            );
        };
        let in_use = self.idle.governor.as_deref() == Some("haltpoll");
        let mut s = if ns == 0.0 {
            "0 ns: an idle virtual CPU halts at once, without polling".to_string()
        } else {
            let mut s = format!(
                "up to {}: an idle virtual CPU polls that long before it halts",
                crate::fmt::fmt_ns(ns)
            );
            let p = |k| self.halt_poll_param(k).unwrap_or("?");
            s.push_str(&format!(
                " (the window starts at {} ns, grows ×{}, shrinks ÷{})",
                p("guest_halt_poll_grow_start"),
                p("guest_halt_poll_grow"),
                p("guest_halt_poll_shrink")
            ));
            s
        };
        if !in_use {
            s.push_str(&format!(
                "; not in use: the idle governor is {}",
                self.idle.governor.as_deref().unwrap_or("not readable")
            ));
        }
        s
    }

    /// KVM's own `halt_poll_ns`, which applies to guests this kernel runs.
    pub fn kvm_halt_poll_words(&self, virtualised: Option<bool>) -> String {
        if !self.linux() {
            return self.or_why(None);
        }
        match self.idle.kvm_halt_poll_ns {
            None => "no KVM module here".into(),
            Some(ns) if virtualised == Some(true) => format!(
                "{} for guests this VM would run itself; the host's window for this VM is not visible from inside",
                crate::fmt::fmt_ns(ns as f64)
            ),
            Some(ns) => format!(
                "{}: a virtual CPU of a guest this machine runs polls up to that long before the host sleeps",
                crate::fmt::fmt_ns(ns as f64)
            ),
        }
    }

    /// The preemption model and where it was read.
    pub fn preemption_words(&self) -> String {
        self.or_why(
            self.preemption
                .as_ref()
                .map(|p| format!("{} ({})", p.model, p.how)),
        )
    }

    /// The cost of one exit to the hypervisor, or why it is not measured.
    pub fn cpuid_words(&self, arch: &str) -> String {
        match &self.cpuid {
            None => format!("not measured: a timed CPUID is the x86 probe, and this is {arch}"),
            Some(c) if c.hypervisor => format!(
                "{} (median of {} batches of {} CPUIDs; under a hypervisor each CPUID exits to it and back)",
                crate::fmt::fmt_ns(c.ns),
                c.batches,
                c.per_batch
            ),
            Some(c) => format!(
                "no hypervisor: a CPUID takes {} here, the instruction itself, not an exit",
                crate::fmt::fmt_ns(c.ns)
            ),
        }
    }

    /// The short form for a result's provenance details, about 19 words: it sits
    /// under every table, where provenance is held under 8 % of a page's words, so it
    /// gives the idle driver and its deepest state's exit latency only; the "Your
    /// machine" page lists every state.
    pub fn line(&self, arch: &str) -> String {
        let ns = crate::fmt::fmt_ns;
        let c = &self.clock;
        let mut parts = vec![match (&c.source, c.step_ns) {
            (Some(s), Some(step)) => format!("{s} clock, reads {} apart", ns(step)),
            (None, Some(step)) => format!("clock reads {} apart", ns(step)),
            (s, None) => format!("clock {}", s.as_deref().unwrap_or("not readable")),
        }];
        if self.linux() {
            let driver = self.idle.driver.as_deref().unwrap_or("not readable");
            let deepest = self
                .idle
                .states
                .iter()
                .filter(|s| s.disabled != Some(true))
                .filter_map(|s| s.latency_us)
                .max();
            parts.push(match deepest {
                Some(us) => format!("idle {driver} (exit ≤ {us} µs)"),
                None => format!("idle {driver}"),
            });
            if let Some(v) = self.halt_poll_param("guest_halt_poll_ns") {
                parts.push(match v.parse::<f64>() {
                    Ok(x) => format!("halt-poll {}", ns(x)),
                    Err(_) => format!("halt-poll {v}"),
                });
            }
            parts.push(format!(
                "preemption {}",
                self.preemption
                    .as_ref()
                    .map_or("not readable", |p| p.model.as_str())
            ));
        }
        parts.push(match &self.cpuid {
            Some(c) if c.hypervisor => format!("VM exit {}", ns(c.ns)),
            Some(c) => format!("CPUID {}, bare metal", ns(c.ns)),
            None => format!("VM exit not measured on {arch}"),
        });
        parts.join(" · ")
    }
}

/// The machine line and, where the record has them, the clock, the idle states, the
/// preemption model and the hypervisor exit: what a result's provenance details say.
pub fn details_line(m: &Machine) -> String {
    match &m.underneath {
        Some(u) => format!("{} · {}", machine_line(m), u.line(&m.arch)),
        None => format!("{} · no clock or idle facts recorded", machine_line(m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{CpuidCost, Idle, IdleState};

    #[test]
    fn the_rows_say_why_a_value_is_missing() {
        let linux = Underneath {
            os: "linux".into(),
            ..Underneath::default()
        };
        let mac = Underneath {
            os: "macos".into(),
            ..Underneath::default()
        };
        assert_eq!(linux.idle_driver_words(), "not readable here");
        assert_eq!(mac.idle_driver_words(), "not read on this OS");
        assert_eq!(mac.preemption_words(), "not read on this OS");
        assert_eq!(mac.guest_halt_poll_words(), "not read on this OS");
        assert!(
            linux
                .guest_halt_poll_words()
                .starts_with("none: no haltpoll governor")
        );
        assert_eq!(linux.kvm_halt_poll_words(Some(true)), "no KVM module here");
        assert!(linux.cpuid_words("aarch64").starts_with("not measured"));
        assert!(
            linux
                .line("aarch64")
                .contains("VM exit not measured on aarch64")
        );
        let mut vm = linux.clone();
        vm.idle.governor = Some("haltpoll".into());
        vm.idle.guest_halt_poll = vec![
            ("guest_halt_poll_grow".into(), "2".into()),
            ("guest_halt_poll_grow_start".into(), "50000".into()),
            ("guest_halt_poll_ns".into(), "200000".into()),
            ("guest_halt_poll_shrink".into(), "2".into()),
        ];
        assert_eq!(
            vm.guest_halt_poll_words(),
            "up to 200 µs: an idle virtual CPU polls that long before it halts (the window starts at 50000 ns, grows ×2, shrinks ÷2)"
        );
        vm.idle.guest_halt_poll[2].1 = "0".into();
        assert!(
            vm.guest_halt_poll_words()
                .starts_with("0 ns: an idle virtual CPU halts at once")
        );
        vm.idle.governor = Some("menu".into());
        assert!(
            vm.guest_halt_poll_words()
                .ends_with("not in use: the idle governor is menu")
        );
        vm.cpuid = Some(CpuidCost {
            ns: 1234.0,
            batches: 21,
            per_batch: 100,
            hypervisor: true,
        });
        assert!(
            vm.cpuid_words("x86_64")
                .starts_with("1.23 µs (median of 21 batches of 100 CPUIDs")
        );
        assert!(vm.line("x86_64").ends_with(" · VM exit 1.23 µs"));
        vm.cpuid = Some(CpuidCost {
            ns: 95.0,
            batches: 21,
            per_batch: 100,
            hypervisor: false,
        });
        assert!(
            vm.cpuid_words("x86_64")
                .starts_with("no hypervisor: a CPUID takes 95.0 ns")
        );
        vm.clock.source = Some("tsc".into());
        vm.clock.available = Some("tsc hpet acpi_pm".into());
        assert_eq!(vm.clock_source_words(), "tsc (also offered: hpet, acpi_pm)");
    }

    #[test]
    fn idle_states_read_as_their_exit_latency_and_target_residency() {
        let state = |name: &str, lat, res, disabled| IdleState {
            name: name.into(),
            latency_us: Some(lat),
            residency_us: Some(res),
            disabled: Some(disabled),
        };
        let u = Underneath {
            os: "linux".into(),
            idle: Idle {
                states: vec![state("POLL", 0, 0, false), state("C1", 2, 4, true)],
                ..Idle::default()
            },
            ..Underneath::default()
        };
        assert_eq!(
            u.idle_states_words(),
            "POLL: exit latency 0 µs, target residency 0 µs; C1: exit latency 2 µs, target residency 4 µs, disabled"
        );
    }
}
