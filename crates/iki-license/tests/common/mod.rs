//! Shared fixtures: a synthetic model package, masters written from it, and helpers to read
//! license copies. Every key here is an obviously fake constant.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_crypto::{SecretKey32, SigningKey};
use iki_format::manifest::{LicenseInfo as ManifestLicense, ModelMeta, Role};
use iki_format::{
    manifest_entry_for, Encoding, Entry, EntryMeta, Event, Kind, Manifest, Meta, NewSlot,
    Protection, SignerInfo, SignerKind, Verified, WriterOptions,
};
use iki_license::{decode_image, LicenseInfo, MasterRef, PlayerSession, ServiceKeys};

pub const FAKE_ROOT: [u8; 32] = [0x52; 32];
pub const FAKE_SELLER_SEED: [u8; 32] = [0x5E; 32];
pub const FAKE_CONTENT_KEY: [u8; 32] = [0xC0; 32];
pub const SERVICE_ID: &str = "https://licenses.iki.test";
pub const SELLER: &str = "acct_seller";
pub const CREATED_MS: u64 = 1_700_000_000_000;
/// 256 KiB: several chunks per texture and for the large `.moc3`.
pub const CHUNK_SIZE: u32 = 256 * 1024;
pub const ATLAS: &str = "kenney-top-down-shooter_spritesheet_tiles.png";
pub const ATLAS_PATH: &str = "Model.2048/texture_00.png";
pub const SYNTHETIC_PATH: &str = "Model.2048/texture_01.png";

pub fn service() -> ServiceKeys {
    ServiceKeys::from_root(SecretKey32::from_bytes(FAKE_ROOT), SERVICE_ID).unwrap()
}

pub fn seller_key() -> SigningKey {
    SigningKey::from_seed(&SecretKey32::from_bytes(FAKE_SELLER_SEED))
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../../shared/fixtures/textures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// xorshift64 bytes: incompressible, reproducible.
pub fn noise(len: usize, mut x: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A 512 x 640 texture: a textured gradient, colour under alpha 0 (left band), partial
/// alpha (right band), and clipped channels (top band).
pub fn synthetic_texture() -> (u32, u32, Vec<u8>) {
    let (w, h) = (512u32, 640u32);
    let grain = noise((w * h) as usize, 7);
    let mut rgba = Vec::with_capacity((w * h * 4) as usize);
    for y in 0..h {
        for x in 0..w {
            let g = grain[(y * w + x) as usize] % 24;
            let r = if y < 32 { 255 } else { (x / 2) as u8 };
            let a = match x {
                0..=63 => 0,
                448.. => (x - 448) as u8 * 3,
                _ => 255,
            };
            rgba.extend_from_slice(&[r.saturating_add(g), (y / 3) as u8 + g, 200 - g, a]);
        }
    }
    (w, h, rgba)
}

/// The files of the package, in manifest order: (path, media type, encoding, bytes, size).
pub struct Package {
    pub files: Vec<(Entry, Vec<u8>)>,
}

pub fn package() -> Package {
    let model3 = br#"{"Version":3,"FileReferences":{"Moc":"Model.moc3","Textures":["Model.2048/texture_00.png","Model.2048/texture_01.png"],"Motions":{"Idle":[{"File":"motions/idle.motion3.json","FadeInTime":0.5,"FadeOutTime":0.5}]}}}"#.to_vec();
    let mut moc3 = b"MOC3\x04\x00\x00\x00".to_vec();
    moc3.extend_from_slice(&noise(300_000, 3));
    let motion =
        br#"{"Version":3,"Meta":{"Duration":2.0,"Fps":30.0,"Loop":true},"Curves":[]}"#.to_vec();
    let (aw, ah, atlas) = decode_image(&fixture(ATLAS)).unwrap();
    let (sw, sh, synthetic) = synthetic_texture();
    let texture = |path: &str, w: u32, h: u32, bytes: &[u8]| {
        let mut entry = manifest_entry_for(path, "image/x-rgba8", Encoding::Rgba8, bytes);
        entry.meta = Some(EntryMeta {
            kind: Some("texture".into()),
            width: Some(w),
            height: Some(h),
            source: Some("image/png".into()),
        });
        entry
    };
    Package {
        files: vec![
            (
                manifest_entry_for(
                    "Model.model3.json",
                    "application/json",
                    Encoding::Deflate,
                    &model3,
                ),
                model3.clone(),
            ),
            (
                manifest_entry_for(
                    "Model.moc3",
                    "application/octet-stream",
                    Encoding::Deflate,
                    &moc3,
                ),
                moc3.clone(),
            ),
            (texture(ATLAS_PATH, aw, ah, &atlas), atlas.clone()),
            (
                texture(SYNTHETIC_PATH, sw, sh, &synthetic),
                synthetic.clone(),
            ),
            (
                manifest_entry_for(
                    "motions/idle.motion3.json",
                    "application/json",
                    Encoding::Deflate,
                    &motion,
                ),
                motion.clone(),
            ),
        ],
    }
}

pub fn model_meta(role: Role, license: Option<ManifestLicense>) -> Meta {
    Meta::Model(ModelMeta {
        format: "iki-model".into(),
        version: 1,
        name: "Synthetic model".into(),
        role,
        license,
        extra: serde_json::Map::new(),
    })
}

/// How to write a test master.
pub struct MasterSpec {
    pub kind: Kind,
    pub role: Role,
    pub recipient: Option<[u8; 32]>,
    pub signer: SignerInfo,
}

impl MasterSpec {
    /// A proper master for `service`, signed by a seller key certified for [`SELLER`].
    pub fn good(service: &ServiceKeys) -> Self {
        let cert = service
            .certify_signing_key(&seller_key().public_key(), SELLER, CREATED_MS - 1000, 0)
            .unwrap();
        let certificate = base64_url(&cert);
        let signer = SignerInfo {
            kind: SignerKind::Account,
            name: Some("Seller's editor".into()),
            account: Some(SELLER.into()),
            certificate: Some(certificate),
            service: None,
        };
        Self {
            kind: Kind::Model,
            role: Role::Master,
            recipient: Some(service.x25519_public()),
            signer,
        }
    }
}

pub fn write_master(package: &Package, spec: MasterSpec) -> Vec<u8> {
    write_master_with_chunk_size(package, spec, CHUNK_SIZE)
}

/// A package small enough to flip every bit of its master: 4 entries, a 16 x 8 texture.
pub fn tiny_package() -> Package {
    let (_, _, pixels) = synthetic_texture();
    let texture: Vec<u8> = pixels
        .chunks(512 * 4)
        .step_by(40)
        .flat_map(|row| row[256 * 4..272 * 4].to_vec())
        .collect();
    let mut entry = manifest_entry_for(ATLAS_PATH, "image/x-rgba8", Encoding::Rgba8, &texture);
    entry.meta = Some(EntryMeta {
        kind: None,
        width: Some(16),
        height: Some(16),
        source: None,
    });
    let files = [
        ("m.model3.json", &b"{\"Version\":3}"[..]),
        ("m.moc3", b"MOC3\x04tiny"),
        ("empty.json", b""),
    ];
    let mut files: Vec<(Entry, Vec<u8>)> = files
        .iter()
        .map(|(path, bytes)| {
            (
                manifest_entry_for(path, "application/json", Encoding::Deflate, bytes),
                bytes.to_vec(),
            )
        })
        .collect();
    files.push((entry, texture));
    Package { files }
}

pub fn write_master_with_chunk_size(
    package: &Package,
    spec: MasterSpec,
    chunk_size: u32,
) -> Vec<u8> {
    let (options, manifest) = master_options(package, spec, chunk_size);
    let bytes: Vec<&[u8]> = package.files.iter().map(|(_, b)| b.as_slice()).collect();
    iki_format::write_all(options, &manifest, &bytes).unwrap()
}

/// The writer options and manifest of [`write_master_with_chunk_size`].
pub fn master_options(
    package: &Package,
    spec: MasterSpec,
    chunk_size: u32,
) -> (WriterOptions, Manifest) {
    let license = (spec.role == Role::License).then(|| ManifestLicense {
        id: "00000000000000aa".into(),
        master_id: "m".into(),
        licensee: "b".into(),
        licensee_name: "B".into(),
        seller: SELLER.into(),
        issued_at: 1,
    });
    let meta = match spec.kind {
        Kind::Model => model_meta(spec.role, license),
        Kind::Project => Meta::Project(iki_format::manifest::ProjectMeta {
            format: "iki-project".into(),
            version: 1,
            name: "P".into(),
            saved_at: "2024-05-01T12:30:00Z".into(),
            canvas: iki_format::manifest::Canvas {
                width: 1,
                height: 1,
            },
            app: "t".into(),
            extra: serde_json::Map::new(),
        }),
    };
    let manifest = Manifest {
        entries: package.files.iter().map(|(e, _)| e.clone()).collect(),
        meta,
    };
    let mut options =
        WriterOptions::new(spec.kind, [0x1F; 16], CREATED_MS, seller_key(), spec.signer);
    options.chunk_size = chunk_size;
    if let Some(public_key) = spec.recipient {
        options.protection = Protection::Encrypted {
            content_key: SecretKey32::from_bytes(FAKE_CONTENT_KEY),
            slots: vec![NewSlot::Recipient { public_key }],
        };
    }
    (options, manifest)
}

pub fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub fn license(id: u64) -> LicenseInfo {
    LicenseInfo {
        id,
        licensee: format!("acct_buyer_{id:x}"),
        licensee_name: "Ada Buyer".into(),
        seller: SELLER.into(),
        issued_at_ms: CREATED_MS + 5000,
    }
}

/// Runs a copier over `master` in 64 KiB pieces, draining output as it goes.
pub fn copy(
    service: &ServiceKeys,
    master_ref: &MasterRef,
    master: &[u8],
    license: &LicenseInfo,
) -> Result<Vec<u8>, iki_license::Error> {
    let mut copier = service.license_copier(master_ref, license)?;
    let mut out = Vec::new();
    for piece in master.chunks(64 * 1024) {
        copier.push(piece)?;
        out.extend_from_slice(&copier.take_output());
    }
    out.extend_from_slice(&copier.finish()?);
    Ok(out)
}

/// What a player read from a copy.
#[derive(Debug)]
pub struct Played {
    pub manifest: Manifest,
    pub entries: Vec<Vec<u8>>,
    pub verified: Verified,
}

/// Key release and reading, as the player does it.
pub fn play(
    service: &ServiceKeys,
    master_ref: &MasterRef,
    license_id: u64,
    copy: &[u8],
) -> Result<Played, iki_license::Error> {
    let mut player = PlayerSession::new()?;
    let sealed = service.seal_license_key(master_ref, license_id, &player.public_key())?;
    player.accept_license_key(license_id, &sealed)?;
    let mut reader = player.open_reader(Some(service.signing_public()))?;
    let (mut manifest, mut entries) = (None, Vec::new());
    let mut pieces = copy.chunks(100_000);
    loop {
        match reader.next()? {
            None => match pieces.next() {
                Some(piece) => reader.push(piece)?,
                None => reader.finish()?,
            },
            Some(Event::Manifest(m)) => {
                entries = vec![Vec::new(); m.entries.len()];
                manifest = Some(m);
            }
            Some(Event::Chunk { entry, data, .. }) => {
                entries[entry as usize].extend_from_slice(&data)
            }
            Some(Event::End(verified)) => {
                return Ok(Played {
                    manifest: manifest.unwrap(),
                    entries,
                    verified,
                })
            }
            Some(_) => {}
        }
    }
}
