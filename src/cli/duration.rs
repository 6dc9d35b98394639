//! Durations as a person types them: `400ms`, `1s`, `1.5s`, `2m`.

use std::time::Duration;

pub const ACCEPTED_FORMS: &str = "a number with a unit: 400ms, 1s, 1.5s, 2m";

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(format!("'{text}' is not a duration; use {ACCEPTED_FORMS}"));
    }
    if unit.is_empty() {
        return Err(format!("'{text}' has no unit; use {ACCEPTED_FORMS}"));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration; use {ACCEPTED_FORMS}"))?;
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "'{text}' has an unknown unit '{unit}'; use {ACCEPTED_FORMS}"
            ))
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > 7.0 * 24.0 * 3600.0 {
        return Err(format!("'{text}' is too long"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_usual_forms() {
        assert_eq!(parse_duration("400ms"), Ok(Duration::from_millis(400)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    }

    #[test]
    fn refuses_bare_numbers_and_junk_with_the_accepted_forms() {
        for bad in ["5", "", "s", "-1s", "1x", "1.2.3s", "1e9s"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains(bad) || bad.is_empty(), "{bad}: {err}");
        }
        assert!(parse_duration("5")
            .unwrap_err()
            .contains("400ms, 1s, 1.5s, 2m"));
    }
}
