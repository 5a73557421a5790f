/**
 * Watches one server's console for the lines its egg's features promise to act on
 * (src/domain/features.ts): the Minecraft EULA, a Java version error, a thread that could not be
 * started, SteamCMD out of disk space. Each feature is raised once per run (a start or an
 * install): the console gets a `[panel] …` line saying what it means and what to do, and every
 * listener a `notice` event, after the lines that raised it. The notices of the current run are
 * kept, for a console opened later (the line may have been printed just before the game ended).
 *
 * Only the server's own lines count, never one of the panel's, which may repeat what somebody
 * typed. The lines are matched as plain text on the main thread: the panel's own constants, linear
 * in the line, and only for servers whose template has one of the features.
 */
import {
  featureOfLine,
  featuresOf,
  noticeOf,
  type Feature,
  type FeatureNotice,
  type NoticeSubject,
} from '../../domain/features.js';
import type { TemplateDefinition } from '../../domain/template.js';
import type { ConsoleFeed } from './console-feed.js';

export class FeatureWatch {
  /** The features of the current run not raised yet. */
  #watched: Feature[] = [];
  #server: NoticeSubject | null = null;
  #template: TemplateDefinition | null = null;
  #raised: FeatureNotice[] = [];
  /** Counts runs: a notice of an earlier run is never told after a new one began. */
  #run = 0;

  #feed: Pick<ConsoleFeed<string>, 'append' | 'notice'> | null = null;

  /**
   * Watches the lines `feed` shows, and tells it each notice: its `[panel] …` line, then the
   * notice event. Once, for the life of the console.
   */
  follow(feed: Pick<ConsoleFeed<string>, 'append' | 'notice' | 'subscribe'>): void {
    this.#feed = feed;
    feed.subscribe((event) => {
      if (event.type === 'log') this.#offer(event.lines);
    });
  }

  /** A new run of `server`, made from `template` (null: none, nothing is watched). */
  begin(server: NoticeSubject, template: TemplateDefinition | null): void {
    this.#run += 1;
    this.#watched = featuresOf(template);
    this.#server = server;
    this.#template = template;
    this.#raised = [];
  }

  /** Lines the console showed, in order. */
  #offer(lines: readonly string[]): void {
    const server = this.#server;
    if (this.#watched.length === 0 || server === null) return;
    for (const line of lines) {
      if (line.startsWith('[panel] ')) continue;
      const feature = featureOfLine(line, this.#watched);
      if (feature === null) continue;
      this.#watched = this.#watched.filter((watched) => watched !== feature);
      const notice = noticeOf(feature, server, this.#template);
      this.#raised.push(notice);
      // Told once the console's listeners have all heard this batch: what the notice writes to
      // the console comes after it for every one of them.
      const run = this.#run;
      queueMicrotask(() => {
        if (run !== this.#run) return;
        this.#feed?.append(`[panel] ${notice.message}`);
        this.#feed?.notice(notice);
      });
      if (this.#watched.length === 0) return;
    }
  }

  /** The notices raised since the current run began, in order. */
  raised(): readonly FeatureNotice[] {
    return this.#raised;
  }
}
