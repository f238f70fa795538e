//! A plugin process and everything it starts, on Windows: the plugin is put in a Job Object
//! created for it, and the end of the exchange terminates the job, which ends every process in
//! it; processes a plugin starts join its job by themselves. The job is also marked
//! kill-on-close, so should this process die first, the system ends them when it closes the
//! job's last handle.
//!
//! The plugin is assigned to its job right after it starts: a process it starts within those
//! microseconds, before the assignment, is outside the job. (Starting it suspended would close
//! that gap, but the standard library gives no handle to its first thread to resume it.)

#![allow(unsafe_code)] // Job Object calls: no safe wrappers exist.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::CREATE_NO_WINDOW;

/// The plugin's Job Object (`None` if the system refused one: the plugin alone is killed).
#[derive(Debug)]
pub(crate) struct Family {
    job: Option<OwnedHandle>,
}

/// Starts `cmd` (without a console window of its own) inside a new Job Object.
pub(crate) fn spawn(cmd: &mut Command) -> std::io::Result<(Child, Family)> {
    cmd.creation_flags(CREATE_NO_WINDOW);
    let job = new_job()?;
    let child = cmd.spawn()?;
    // SAFETY: both handles are open: the job's by `job`, the process's by `child`.
    if unsafe { AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) } == 0 {
        let e = std::io::Error::last_os_error();
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok((child, Family { job: Some(job) }))
}

fn new_job() -> std::io::Result<OwnedHandle> {
    // SAFETY: null attributes and name ask for an unnamed job with default security.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a job handle just created and owned by nothing else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: a zeroed JOBOBJECT_EXTENDED_LIMIT_INFORMATION is valid; the call reads it, of the
    // size given, for the class named.
    let ok = unsafe {
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(job)
}

/// Ends the plugin and every process in its job, waits (within `budget`) until the job is
/// empty, and reaps the plugin. Returns whether the job was found empty.
pub(crate) fn end_all(child: &mut Child, family: &Family, budget: Duration) -> bool {
    let until = Instant::now() + budget;
    let Some(job) = &family.job else {
        let _ = child.kill();
        let _ = child.wait();
        return true;
    };
    // SAFETY: the job handle is open for the call.
    unsafe { TerminateJobObject(job.as_raw_handle(), 1) };
    let _ = child.kill();
    let _ = child.wait();
    loop {
        if active(job) == Some(0) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How many processes are still in the job.
fn active(job: &OwnedHandle) -> Option<u32> {
    // SAFETY: a zeroed accounting record is valid; the call fills it, of the size given.
    unsafe {
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = std::mem::zeroed();
        let ok = QueryInformationJobObject(
            job.as_raw_handle(),
            JobObjectBasicAccountingInformation,
            (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast(),
            std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
            std::ptr::null_mut(),
        );
        (ok != 0).then_some(info.ActiveProcesses)
    }
}

/// Nothing to adopt on Windows: a plugin's descendants are in its job.
pub fn adopt_orphans() -> std::io::Result<()> {
    Ok(())
}

/// Windows has no SIGPIPE: a write to a plugin that has exited fails with an error.
pub(crate) fn ignore_sigpipe_here() {}
