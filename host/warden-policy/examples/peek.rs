fn main() {
    let path = std::env::args().nth(1).unwrap();
    match warden_policy::load(std::path::Path::new(&path)) {
        Ok(p) => println!("{p:#?}"),
        Err(e) => println!("{e}"),
    }
}
