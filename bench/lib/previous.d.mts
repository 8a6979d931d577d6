// Types of bench/lib/previous.mjs for the TypeScript tests (ts/test/bench-results.test.ts).
export declare const START: string;
export declare const END: string;
export declare function splitResults(text: string): { before: string; block: string; after: string };
export declare function joinResults(text: string, block: string): string;
export declare function ownRun(block: string): string;
export declare function sections(run: string): Map<string, string>;
export declare function tableRows(run: string): Map<string, { header: string[]; cells: string[] }>;
export declare function besidePrevious(run: string, previous: Map<string, { header: string[]; cells: string[] }>): string;
export declare function nextBlock(oldBlock: string, head: string, fresh: string[], previousLabel: string): string;
