//! libhrr_intercept.so (work in progress).
