//! Import published retrograde files into a database.
