// The explorer (placeholder until it lands).
