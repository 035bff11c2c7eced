use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
fn main() {
    let d = cap_std::fs::Dir::open_ambient_dir("/work/main/policies/example/portfolio", cap_std::ambient_authority()).unwrap();
    let mut o = cap_std::fs::OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No);
    println!("{:?}", d.open_with("notes.md", &o).map(|_| ()));
    let sub = d.open_dir(".").unwrap();
    println!("{:?}", sub.entries().map(|e| e.count()));
    println!("{:?}", d.entries().map(|e| e.count()));
}
