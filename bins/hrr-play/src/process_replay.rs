//! `ProcessReplay`: how the `hrr-play` replaying one process of a job
//! ended — its exit status and its `--json` summary.

use serde_json::Value;

/// One process's replay, as its `hrr-play` reported it.
#[derive(Clone, Debug, Default)]
pub struct ProcessReplay {
    /// Its exit status (`None`: ended by a signal, or never started).
    pub exit: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Its `--json` summary (`None`: it printed none, e.g. an archive
    /// that is missing or cannot be read).
    pub summary: Option<Value>,
    /// Why it could not be started.
    pub spawn_error: Option<String>,
    /// Why the job stopped it (or never started it): the job's signal, or
    /// another process's failure.
    pub stopped: Option<String>,
}

impl ProcessReplay {
    /// It replayed and passed (a pass of part of a capture only with
    /// `--allow-partial`, as a single replay).
    pub fn passed(&self) -> bool {
        self.exit == Some(0) && self.summary.as_ref().is_some_and(|s| s["result"] == "PASS")
    }

    /// It ended before replaying everything its archive holds: killed,
    /// never started, no summary, stopped by a fatal event, or a partial
    /// capture. Its peers may then wait for it forever (a collective it
    /// never reached); a replay that ran to its end and only compared
    /// wrong leaves them nothing to wait for.
    pub fn ended_early(&self) -> bool {
        match &self.summary {
            Some(s) => self.exit.is_none() || s.get("fatal").is_some() || self.partial(),
            None => true,
        }
    }

    /// It was never started (no status, no error).
    pub fn never_ran(&self) -> bool {
        self.exit.is_none()
            && self.signal.is_none()
            && self.spawn_error.is_none()
            && self.stopped.is_none()
    }

    /// Its summary says it replayed part of its capture.
    pub fn partial(&self) -> bool {
        self.summary
            .as_ref()
            .is_some_and(|s| s["partial"] == Value::Bool(true))
    }

    /// The status it counts for in the job's: its own, 128 + the signal
    /// that ended it, 2 when it could not start.
    pub fn exit_code(&self) -> u8 {
        match (self.exit, self.signal) {
            (Some(c), _) => (c & 0xff) as u8,
            (None, Some(s)) => (128 + s).clamp(0, 255) as u8,
            _ => 2,
        }
    }

    /// `PASS`, `PASS (partial)`, `FAIL`, `FAIL (partial)`, or why there is
    /// no verdict (`FAIL (exit 2, no summary)`, `FAIL (killed by signal
    /// 9)`, `FAIL (not started: …)`).
    pub fn verdict(&self) -> String {
        if let Some(why) = &self.stopped
            && !self.passed()
        {
            return format!("FAIL ({why})");
        }
        if let Some(why) = &self.spawn_error {
            return format!("FAIL (not started: {why})");
        }
        if let Some(s) = self.signal {
            return format!("FAIL (killed by signal {s})");
        }
        let Some(summary) = &self.summary else {
            return format!("FAIL (exit {}, no summary)", self.exit_code());
        };
        let word = if self.passed() { "PASS" } else { "FAIL" };
        if self.partial() {
            format!("{word} (partial)")
        } else if summary.get("fatal").is_some() {
            format!("{word} (stopped)")
        } else {
            word.into()
        }
    }

    /// `d2h : P pass (E exact, T within tolerance), F fail` from its
    /// summary; `d2h : none` without one.
    pub fn d2h(&self) -> String {
        let Some(s) = &self.summary else {
            return "d2h : none".into();
        };
        let n = |k: &str| s[k].as_u64().unwrap_or(0);
        let (exact, tol) = (n("d2h_exact"), n("d2h_tolerance"));
        let mut line = format!(
            "d2h : {} pass ({exact} exact, {tol} within tolerance), {} fail",
            exact + tol,
            n("d2h_fail")
        );
        if n("d2h_nondeterministic") > 0 {
            line.push_str(&format!(", {} nondeterministic", n("d2h_nondeterministic")));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let pass = ProcessReplay {
            exit: Some(0),
            summary: Some(serde_json::json!({"result": "PASS", "partial": false,
                "d2h_exact": 2, "d2h_tolerance": 0, "d2h_fail": 0})),
            ..Default::default()
        };
        assert!(pass.passed());
        assert_eq!(pass.verdict(), "PASS");
        assert_eq!(
            pass.d2h(),
            "d2h : 2 pass (2 exact, 0 within tolerance), 0 fail"
        );
        let missing = ProcessReplay {
            exit: Some(2),
            ..Default::default()
        };
        assert!(!missing.passed());
        assert_eq!(missing.verdict(), "FAIL (exit 2, no summary)");
        let killed = ProcessReplay {
            signal: Some(9),
            ..Default::default()
        };
        assert_eq!((killed.exit_code(), killed.passed()), (137, false));
        // A zero exit without a summary saying PASS is no pass.
        let silent = ProcessReplay {
            exit: Some(0),
            ..Default::default()
        };
        assert!(!silent.passed());
    }
}
