/**
 * The resource limits of uploads, license-copy downloads and identify (issue 15 items 2 and 3),
 * read by `config.ts` with its validating reader: their shapes, their defaults and how the
 * defaults were chosen. Each is counted in the database (`services/usage-limits.ts`), so every
 * instance sharing it enforces one count.
 */

const GIB = 1024 * 1024 * 1024;

/** Per-account limits of master uploads. */
export interface UploadLimits {
  /** Uploads one account may have running at once. */
  concurrentPerAccount: number;
  /** Bytes of stored masters one account may hold, counted at upload. */
  storageQuotaBytes: number;
  /**
   * The most a master's entries may decode to, all together, read from its manifest before
   * any entry is decoded (IKI_MASTER_MAX_DECODED_BYTES, issue 22 item 10). Undefined: the default.
   */
  maxDecodedBytes?: number;
}

/** Limits of license-copy downloads (each one decrypts, watermarks and re-encrypts a master). */
export interface CopyLimits {
  /** Downloads started per license within the window. */
  perLicense: number;
  /** Downloads started per licensee, over all their licenses, within the window. */
  perUser: number;
  windowSeconds: number;
  /** Downloads of one license running at once. */
  concurrentPerLicense: number;
  /** Downloads of one licensee running at once. */
  concurrentPerUser: number;
}

/** Limits of identify (each one decodes an image). */
export interface IdentifyLimits {
  /** Identify requests per seller within the window. */
  perSeller: number;
  windowSeconds: number;
  /**
   * Hard cap on a decoded image's pixels, below the master's largest texture when that is
   * larger; at most the decoder's ceiling (16384 x 16384).
   */
  maxPixels: number;
}

/** Every limit of this module. */
export interface QuotaLimits {
  uploads: UploadLimits;
  copies: CopyLimits;
  identify: IdentifyLimits;
}

/** The decoder's ceiling in pixels (crates/iki-license `ImageBound::CEILING`: 1 GiB of RGBA8). */
export const IDENTIFY_CEILING_PIXELS = 16384 * 16384;

/** Defaults and why. */
export const QUOTA_DEFAULTS: QuotaLimits = {
  uploads: {
    // Two at once lets a seller upload while another upload finishes; each running upload may
    // hold up to IKI_MAX_MASTER_BYTES of temporary storage and the complete check's CPU.
    concurrentPerAccount: 2,
    // Ten masters at the 1 GiB upload ceiling.
    storageQuotaBytes: 10 * GIB,
    // The complete check and every copy decode the whole master, and deflate can inflate a
    // 1 MB upload to 1 GiB: sixteen 4096x4096 RGBA textures fit in 1 GiB, far more than a
    // model uses, and decoding it is seconds of a worker, not hours.
    maxDecodedBytes: GIB,
  },
  copies: {
    // A buyer downloads a copy once per device and again after a lost file or a cut
    // connection: ten a day is generous for that and caps the re-encryption one license can
    // cause at ten masters' worth a day.
    perLicense: 10,
    perUser: 50,
    windowSeconds: 24 * 3600,
    // Two at once covers a second device or a retry while a stalled transfer times out.
    concurrentPerLicense: 2,
    concurrentPerUser: 4,
  },
  identify: {
    // A seller tracing a leak checks a handful of textures; sixty an hour leaves room for a
    // whole model's atlases and caps the decoding one account can cause.
    perSeller: 60,
    windowSeconds: 3600,
    // 8192 x 8192, the largest Cubism texture size: 256 MiB of RGBA8 per decode at most.
    maxPixels: 8192 * 8192,
  },
};

/** Reads an integer variable within [min, max] (config.ts's validating reader). */
export type IntReader = (name: string, fallback: number, min: number, max: number) => number;

/** Reads every quota limit from the environment through `int`. */
export function readQuotaLimits(int: IntReader): QuotaLimits {
  const d = QUOTA_DEFAULTS;
  return {
    uploads: {
      concurrentPerAccount: int('IKI_CONCURRENT_UPLOADS_PER_ACCOUNT', d.uploads.concurrentPerAccount, 1, 100),
      storageQuotaBytes: int('IKI_STORAGE_QUOTA_BYTES', d.uploads.storageQuotaBytes, 1024, 2 ** 50),
      maxDecodedBytes: int('IKI_MASTER_MAX_DECODED_BYTES', d.uploads.maxDecodedBytes ?? GIB, 1024, 2 ** 50),
    },
    copies: {
      perLicense: int('IKI_COPIES_PER_LICENSE', d.copies.perLicense, 1, 100000),
      perUser: int('IKI_COPIES_PER_USER', d.copies.perUser, 1, 1000000),
      windowSeconds: int('IKI_COPY_WINDOW_SECONDS', d.copies.windowSeconds, 60, 30 * 24 * 3600),
      concurrentPerLicense: int('IKI_CONCURRENT_COPIES_PER_LICENSE', d.copies.concurrentPerLicense, 1, 100),
      concurrentPerUser: int('IKI_CONCURRENT_COPIES_PER_USER', d.copies.concurrentPerUser, 1, 1000),
    },
    identify: {
      perSeller: int('IKI_IDENTIFY_PER_SELLER', d.identify.perSeller, 1, 100000),
      windowSeconds: int('IKI_IDENTIFY_WINDOW_SECONDS', d.identify.windowSeconds, 60, 24 * 3600),
      maxPixels: int('IKI_IDENTIFY_MAX_PIXELS', d.identify.maxPixels, 1, IDENTIFY_CEILING_PIXELS),
    },
  };
}
