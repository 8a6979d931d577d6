/**
 * How guessable a file password is (issue 14 item 2), estimated by zxcvbn-ts
 * (`@zxcvbn-ts/core` with its common and English dictionaries): score 0 (too guessable) to 4
 * (very unguessable), from the guesses an attacker with dictionaries, common patterns, keyboard
 * walks, dates and repeats would need. A file's password slot can be guessed offline at the
 * speed of its Argon2id cost (docs/format.md section 3.1), so `iki pack` refuses a password
 * below {@link MIN_SCORE} unless told `--weak-password`, and then warns. The project page
 * (`projectTasks.save`, issue 24 item 4) refuses the same passwords with the same check and
 * the same words, {@link describeWeakness}.
 *
 * The dictionaries are loaded only when a password is checked, so other commands start fast.
 */

/** The lowest score `iki pack` and the project page take (3: "safely unguessable"). */
export const MIN_SCORE = 3;

/** The estimator's verdict. */
export interface Strength {
  /** 0 to 4. */
  score: number;
  /** log10 of the estimated guesses. */
  guessesLog10: number;
  /** Why it is weak, when it is (may be empty). */
  warning: string;
  suggestions: string[];
}

let configured = false;

/** Estimates `password`; `context` holds words an attacker knows (the file's name, the user's address). */
export async function passwordStrength(password: string, context: readonly string[] = []): Promise<Strength> {
  const { zxcvbn, zxcvbnOptions } = await import('@zxcvbn-ts/core');
  if (!configured) {
    const common = await import('@zxcvbn-ts/language-common');
    const en = await import('@zxcvbn-ts/language-en');
    zxcvbnOptions.setOptions({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
    });
    configured = true;
  }
  const result = zxcvbn(password, [...context]);
  return {
    score: result.score, guessesLog10: result.guessesLog10,
    warning: result.feedback.warning ?? '', suggestions: result.feedback.suggestions,
  };
}

/** What to do about a weak password, after {@link describeWeakness}; the CLI adds its flag. */
export const CHOOSE_ANOTHER = 'Choose a longer one (several unrelated words work well)';

/** One line describing a weak password's problem and what to do. */
export function describeWeakness(strength: Strength): string {
  const why = strength.warning === '' ? '' : ` ${strength.warning.replace(/\.?$/u, '.')}`;
  const how = strength.suggestions.length === 0 ? '' : ` ${strength.suggestions.join(' ')}`;
  return `the password is easy to guess (strength ${strength.score} of 4, about 10^${Math.round(strength.guessesLog10)} guesses).${why}${how}`;
}
