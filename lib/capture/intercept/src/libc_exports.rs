//! The libc entry points this library defines, made by the machinery's
//! macros for this library's recorder ([`Capture`](crate::capture::Capture)):
//! `_exit` and `_Exit`, which finish the archive before the process ends
//! (with a `.fini_array` destructor for `exit()`:
//! `hrr_interpose::process_exit`), and `dlsym` (x86_64), whose answers for
//! a library handle the CUDA family's driver routes replace with its
//! wrappers (`hrr_interpose::dlsym_hook`); and `pthread_create`, which
//! starts the threads NCCL and RCCL start inside their calls as the
//! library's own (`hrr_interpose::library_threads`).

hrr_interpose::process_exit_exports!(crate::capture::Capture);

hrr_interpose::dlsym_export!(b"cu", crate::cuda::driver::on_dlsym);

hrr_interpose::pthread_create_export!();
