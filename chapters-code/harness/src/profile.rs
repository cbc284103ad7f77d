//! Measurement profiles: `quick` for the first build, tests and CI; `full` for the
//! write-ups' own parameters.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The whole book in about a minute on two cores.
    Quick,
    /// The write-ups' parameters or larger; the whole book in at most 15 minutes.
    Full,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        }
    }

    pub const ALL: [Profile; 2] = [Profile::Quick, Profile::Full];

    /// Picks the value for this profile.
    pub fn pick<T>(self, quick: T, full: T) -> T {
        match self {
            Profile::Quick => quick,
            Profile::Full => full,
        }
    }

    /// The profile named by `COW_PROFILE`, or quick when it is unset or empty (see
    /// `crate::env`). An unknown name, or a value that is not UTF-8, is an error; an
    /// unknown name's lists the valid ones.
    pub fn from_env() -> anyhow::Result<Profile> {
        match crate::env::text("COW_PROFILE").map_err(anyhow::Error::msg)? {
            None => Ok(Profile::Quick),
            Some(v) => Profile::parse(&v).map_err(|e| anyhow::anyhow!("COW_PROFILE: {e}")),
        }
    }

    pub fn parse(s: &str) -> anyhow::Result<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| anyhow::anyhow!("unknown profile `{s}`; valid profiles: quick, full"))
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_list_the_valid_ones() {
        for p in Profile::ALL {
            assert_eq!(Profile::parse(p.name()).unwrap(), p);
        }
        let err = Profile::parse("fast").unwrap_err().to_string();
        assert!(err.contains("quick") && err.contains("full"), "{err}");
        assert_eq!(Profile::Full.pick(1, 2), 2);
    }
}
