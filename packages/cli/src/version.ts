/** The version `hankweave-journal --version` prints: the published package's (a test keeps them equal). */
export const VERSION = "0.1.0";
