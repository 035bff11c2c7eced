//! A network of the command's own under a network allowlist: before the
//! Landlock domain is entered, the child makes a user and a network
//! namespace (loopback alone, brought up), listens on `127.0.0.1:3128` there
//! and hands the listener to Warden, whose proxy serves it, as bubblewrap's
//! bridge does. No route leads anywhere else, so the proxy's port is not a
//! way to any host that listens on it. System calls only: for a child
//! between fork and exec.

use std::os::fd::RawFd;

/// What the child writes to its `/proc/self/{setgroups,uid_map,gid_map}`,
/// made before the fork: the same uid and gid inside as outside.
pub struct Maps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Maps {
    pub fn of_this_process() -> Maps {
        let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
        Maps { uid_map: format!("{uid} {uid} 1\n").into_bytes(), gid_map: format!("{gid} {gid} 1\n").into_bytes() }
    }
}

/// # Safety
/// `control` must be the command's end of Warden's socket pair, and `maps`
/// stay mapped until exec.
pub unsafe fn private_network(control: RawFd, maps: &Maps) -> std::io::Result<()> {
    let fail = std::io::Error::last_os_error;
    // SAFETY: system calls on integers and on buffers that live on this stack or in `maps`.
    unsafe {
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
            return Err(fail());
        }
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", &maps.uid_map)?;
        write_file(c"/proc/self/gid_map", &maps.gid_map)?;
        // Loopback up.
        let probe = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if probe < 0 {
            return Err(fail());
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            request.ifr_name[i] = *b as libc::c_char;
        }
        request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(probe, libc::SIOCSIFFLAGS, &request) != 0 {
            return Err(fail());
        }
        libc::close(probe);
        // The proxy's listener, handed to Warden.
        let listener = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if listener < 0 {
            return Err(fail());
        }
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = warden_net::bridge::PORT.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let size = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(listener, (&address as *const libc::sockaddr_in).cast(), size) != 0 || libc::listen(listener, 128) != 0 {
            return Err(fail());
        }
        send_descriptor(control, listener)?;
        libc::close(listener);
        libc::close(control);
    }
    Ok(())
}

unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: a path and a buffer that outlive the calls.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One byte, `L`, with `fd` attached: what `warden_net::bridge::receive` reads.
unsafe fn send_descriptor(control: RawFd, fd: RawFd) -> std::io::Result<()> {
    // SAFETY: the message, its one buffer and its control data live on this stack.
    unsafe {
        let mut byte = *b"L";
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut space = [0u64; 8];
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = space.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        if libc::sendmsg(control, &message, 0) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
