//! RFC 6570 URI templates (levels 1–3): parsing, matching, overlap detection.
