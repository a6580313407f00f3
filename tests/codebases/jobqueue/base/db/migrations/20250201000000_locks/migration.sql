CREATE TABLE `job_lock` (`job_id` text PRIMARY KEY NOT NULL, `holder` text NOT NULL, `expires_at` integer NOT NULL);
--> statement-breakpoint
CREATE TABLE `checkpoint` (`id` text PRIMARY KEY NOT NULL, `job_id` text NOT NULL, `step` integer NOT NULL, `state` text NOT NULL, `updated_at` integer NOT NULL);
