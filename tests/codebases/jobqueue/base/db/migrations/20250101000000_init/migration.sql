CREATE TABLE `job` (`id` text PRIMARY KEY NOT NULL, `status` text NOT NULL, `attempts` integer DEFAULT 0 NOT NULL, `payload` text NOT NULL, `updated_at` integer NOT NULL);
